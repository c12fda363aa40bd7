import { runAs } from '../audit/actor';
import { ApiError } from '../errors';
import { generateKeyValue, sha256Hex } from './key-format';
import { checkExpectation } from './key-expectation';
import type { ChangeOrigin, KeyAdmin, KeyAdminContext, ReasonChange } from './key-admin-types';
import { notAllowed, parseInput, parsePause, RollSchema, SettleSchema } from './key-input';
import { keyView } from './key-view';
import { rollGrants, withoutLeak } from './key-admin-leaks';
import { heldReasons, LEAKED, UNPAID, reasonFields, sameReasons, sortedReasons, withPauseReasons, type PauseReason } from './pause-reasons';
import type { StoredKey } from './redis-layout';

type States = Pick<KeyAdmin, 'pause' | 'settle' | 'revoke' | 'roll'>;

const unlessRevoked = (what: string) => (s: StoredKey): void => {
  if (s.status === 'revoked') throw notAllowed(`A revoked key cannot be ${what}.`);
};

/** 409 for a settle that would clear `leaked` (of key `id`, or named for a whole account): only a roll clears that. */
export const leakedConflict = (id?: string): ApiError =>
  new ApiError('conflict', {}, undefined, id === undefined
    ? 'A settle never clears the reason leaked: roll each leaked key (POST /admin/keys/{id}/roll, or keys roll ID) to give it a new value.'
    : `Key "${id}" is paused because its value leaked; a settle never clears that: roll the key (POST /admin/keys/${id}/roll, or keys roll ${id}) to give it a new value. To settle another reason, name it.`);

/** What a settle asks for: one reason removed, or (none named) every reason but `leaked`. */
export type SettleAsk = { readonly reason?: PauseReason };

/** The reasons left after a settle of `ask` (`leaked` is never removed here). */
export const afterSettle = (reasons: readonly PauseReason[], ask: SettleAsk): PauseReason[] =>
  reasons.filter((r) => r === LEAKED || (ask.reason !== undefined && r !== ask.reason));

/** Runs `work` as the origin's actor when it names one, else as the channel's (`runAs`). */
export const asOrigin = <T>(origin: ChangeOrigin | undefined, work: () => Promise<T>): Promise<T> => (origin?.actor ? runAs(origin.actor, work) : work());

/** The record with its reasons moved by `next` (and the invoice link noted); the record itself when nothing changes. */
function withReasonsMoved(s: StoredKey, next: (reasons: PauseReason[]) => PauseReason[], invoiceUrl: string | undefined): StoredKey {
  const reasons = heldReasons(s);
  const wanted = sortedReasons(next(reasons));
  const link = invoiceUrl !== undefined && wanted.includes(UNPAID) && s.billing_invoice_url !== invoiceUrl ? invoiceUrl : undefined;
  if (sameReasons(reasons, wanted) && link === undefined) return s;
  const after = withPauseReasons(s, wanted);
  return link === undefined ? after : { ...after, billing_invoice_url: link };
}

/**
 * The key admin's changes of a key's state: pause, settle, revoke, roll (each committed, audited,
 * announced, then its event sent). Pausing adds a reason to the key's set, settling removes one (or
 * all but `leaked`); one that changes nothing writes nothing, audits nothing, sends nothing.
 */
export function keyAdminStates(ctx: KeyAdminContext): States & {
  pauseFor(id: string, reason: PauseReason, origin?: ChangeOrigin, invoiceUrl?: string): Promise<ReasonChange>;
  settleFor(id: string, ask: SettleAsk, origin?: ChangeOrigin, strict?: boolean): Promise<ReasonChange>;
} {
  const { writer, emit } = ctx;
  const view = (s: StoredKey) => keyView(s, ctx.config());

  /**
   * One change of the key's reasons; `next` returns the new set (or throws to refuse). `invoiceUrl`:
   * the open invoice to note while the set holds `unpaid_renewal` (a new link alone is a change,
   * audited, with no event: the reasons did not move).
   */
  async function moveReasons(
    id: string, action: 'pause' | 'settle', origin: ChangeOrigin | undefined, next: (reasons: PauseReason[]) => PauseReason[], invoiceUrl?: string,
  ): Promise<ReasonChange> {
    const done = await asOrigin(origin, () => writer.update(id, action, (s) => {
      unlessRevoked(action === 'pause' ? 'paused' : 'settled')(s);
      return withReasonsMoved(s, next, invoiceUrl);
    }));
    const before = heldReasons(done.before);
    const after = heldReasons(done.after);
    if (!sameReasons(before, after)) {
      const moved = action === 'pause' ? { added: after.filter((r) => !before.includes(r)) } : { settled: before.filter((r) => !after.includes(r)) };
      await emit(action === 'pause' ? 'key.paused' : 'key.settled', {
        ...origin?.eventFields, key_id: id, status: done.after.status, pause_reasons: after, ...reasonFields(after), ...moved,
      });
    }
    return { id, changed: !done.unchanged, before, after, status: done.after.status, view: view(done.after) };
  }

  const pauseFor = (id: string, reason: PauseReason, origin?: ChangeOrigin, invoiceUrl?: string) => moveReasons(id, 'pause', origin, (reasons) => [...reasons, reason], invoiceUrl);
  /** `strict`: a settle that leaves the key paused only because it leaked (or names `leaked`) is 409 and changes nothing. */
  const settleFor = (id: string, ask: SettleAsk, origin?: ChangeOrigin, strict = true) => moveReasons(id, 'settle', origin, (reasons) => {
    if (ask.reason === LEAKED) throw leakedConflict(id);
    const left = afterSettle(reasons, ask);
    if (strict && ask.reason === undefined && left.includes(LEAKED)) throw leakedConflict(id);
    return left;
  });

  return {
    pauseFor,
    settleFor,
    async pause(id, reason, origin, details) {
      const input = parsePause(reason, details);
      return (await pauseFor(id, input.reason, origin, input.billing_invoice_url)).view;
    },
    async settle(id, reason, origin) {
      const ask = parseInput(SettleSchema, reason === undefined || reason === null ? {} : { reason });
      return (await settleFor(id, ask, origin)).view;
    },
    async revoke(id, expect, origin) {
      const revoked = view((await asOrigin(origin, () => writer.update(id, 'revoke', (s) => {
        checkExpectation(id, s, expect);
        const { previous_key_sha256: _p, previous_expires_at: _e, ...rest } = s;
        return withPauseReasons({ ...rest, status: 'revoked' }, []);
      }))).after);
      await emit('key.revoked', { ...origin?.eventFields, key_id: id, status: 'revoked' });
      return revoked;
    },
    /** A new value; a key paused because its value leaked loses that reason (active when it was the only one). */
    async roll(id, graceSeconds, expect) {
      const grace = parseInput(RollSchema, { grace_seconds: graceSeconds }).grace_seconds;
      const key = generateKeyValue();
      const { after } = await writer.update(id, 'roll', (s) => {
        checkExpectation(id, s, expect);
        unlessRevoked('rolled')(s);
        const { previous_key_sha256: _p, previous_expires_at: _e, ...current } = withoutLeak(s);
        const reasons = heldReasons(s);
        const rest = reasons.includes(LEAKED) ? withPauseReasons(current, reasons.filter((r) => r !== LEAKED)) : current;
        // A leaked value gets no grace; the roll clears the leak mark (above) and the reason `leaked`.
        return grace > 0 && rollGrants(s)
          ? { ...rest, key_sha256: sha256Hex(key), previous_key_sha256: s.key_sha256, previous_expires_at: Date.now() + grace * 1000 }
          : { ...rest, key_sha256: sha256Hex(key) };
      });
      const until = after.previous_expires_at; // the grace end as stored, to the millisecond
      await emit('key.rolled', { key_id: id, previous_key_valid_until: grace > 0 && until !== undefined ? new Date(until).toISOString() : null });
      return { id, key };
    },
  };
}
