import type { Logger } from 'pino';
import type { ChangeOrigin } from '../keys/key-admin-types';
import type { BillingApply, Entitlements } from './billing-apply';
import type { AccountState, BillingState, Decided } from './billing-state';
import type { Decision } from './stripe-events';

/** The fields of the account's state a decision writes. */
function fieldsOf(d: Decision): Decided[] {
  switch (d.kind) {
    case 'unpaid':
      return [
        { field: 'unpaid', value: { unpaid: d.unpaid } },
        ...(d.invoiceUrl !== undefined || !d.unpaid ? [{ field: 'invoice', value: { url: d.invoiceUrl ?? null } }] : []),
      ];
    case 'dispute':
      return [{ field: `dispute:${d.dispute}`, value: { open: d.open } }];
    case 'entitlements':
      return [{ field: 'entitlements', value: { ...(d.countries ? { countries: d.countries } : {}), ...(d.tier ? { tier: d.tier } : {}) } }];
    case 'revoke':
      return [];
  }
}

/** What the keys should be, as the account's state says: each part compared between two reads. */
const wanted = (state: AccountState) => ({
  unpaid: JSON.stringify({
    unpaid: (state.get('unpaid') as { unpaid?: boolean } | undefined)?.unpaid === true,
    url: (state.get('invoice') as { url?: string | null } | undefined)?.url ?? null,
  }),
  disputed: [...state.entries()].some(([field, v]) => field.startsWith('dispute:') && (v as { open?: boolean }).open === true),
  entitlements: JSON.stringify(state.get('entitlements') ?? null),
});

type Part = 'unpaid' | 'disputed' | 'entitlements';
const ROUNDS = 5;

/**
 * Applies one event's decisions to one account: stores them (the latest event wins each field),
 * then makes the account's keys what the stored state says for each part this event won, and reads
 * the state again: another event that won meanwhile (on any instance) may have applied an older
 * read, so the parts that moved are applied again until a read agrees with what was applied.
 * Returns how many key changes were made.
 */
export async function applyToAccount(accountId: string, created: number, decisions: readonly Decision[], deps: { state: BillingState; apply: BillingApply; origin: ChangeOrigin; logger: Logger }): Promise<number> {
  const { state, apply, origin } = deps;
  let changed = 0;
  if (decisions.some((d) => d.kind === 'revoke')) changed += await apply.revoke(accountId, origin);
  const won = await state.decide(accountId, created, decisions.flatMap(fieldsOf));
  let parts = new Set<Part>();
  if (won.has('unpaid') || won.has('invoice')) parts.add('unpaid');
  if ([...won].some((f) => f.startsWith('dispute:'))) parts.add('disputed');
  if (won.has('entitlements')) parts.add('entitlements');
  let current = await state.read(accountId);
  for (let round = 0; round < ROUNDS && parts.size; round++) {
    const goal = wanted(current);
    if (parts.has('unpaid')) {
      const unpaid = JSON.parse(goal.unpaid) as { unpaid: boolean; url: string | null };
      changed += await apply.reason(accountId, 'unpaid_renewal', unpaid.unpaid, origin, unpaid.url ?? undefined);
    }
    if (parts.has('disputed')) changed += await apply.reason(accountId, 'payment_dispute', goal.disputed, origin);
    if (parts.has('entitlements')) changed += await apply.entitlements(accountId, (JSON.parse(goal.entitlements) as Entitlements | null) ?? {}, origin);
    current = await state.read(accountId);
    const now = wanted(current);
    parts = new Set([...parts].filter((p) => now[p] !== goal[p]));
  }
  return changed;
}
