import { integerOption, printJson, stringOption, UsageError, type Command, type CommandContext } from '../command';
import { holderStores, repeatedOption } from '../holders';

/** As gateway/accounts/account-page.ts (not imported: help loads nothing of the gateway). */
const ACCOUNT_PAGE = { default: 100, min: 1, max: 1000 } as const;
const SUBCOMMANDS = ['create', 'list', 'show', 'set', 'delete', 'link', 'pause', 'settle'] as const;
type Sub = (typeof SUBCOMMANDS)[number];

/** The account id the sub-command needs (list takes none). */
function accountId(ctx: CommandContext, sub: Sub): string {
  const id = ctx.args[1];
  if (sub === 'list') {
    if (id !== undefined) throw new UsageError(`account list: unexpected argument "${id}"`, 'account');
    return '';
  }
  if (id === undefined) throw new UsageError(`account ${sub}: missing account ID`, 'account');
  return id;
}

async function run(ctx: CommandContext): Promise<void> {
  const sub = ctx.args[0] as Sub;
  if (!(SUBCOMMANDS as readonly string[]).includes(sub)) throw new UsageError(`account: unknown sub-command "${sub}" (one of ${SUBCOMMANDS.join(', ')})`, 'account');
  const id = accountId(ctx, sub);
  const { accountView } = await import('../../../gateway/accounts/account');
  if (sub === 'link') return link(ctx, id);
  if (sub === 'pause' || sub === 'settle') return changeKeys(ctx, sub, id);
  const { accounts } = await holderStores(ctx);
  const name = stringOption(ctx, 'name');
  const emails = repeatedOption(ctx, 'email');
  const billing = stringOption(ctx, 'billing-customer');
  switch (sub) {
    case 'create': {
      if (name === undefined || emails === undefined) throw new UsageError('account create: --name and at least one --email are required', 'account');
      const created = await accounts.create({ id, name, emails, ...(billing !== undefined ? { billingCustomer: billing } : {}) });
      return printJson(ctx, accountView(created));
    }
    case 'list': {
      const limit = integerOption(ctx, 'limit') ?? ACCOUNT_PAGE.default;
      const cursor = stringOption(ctx, 'cursor');
      const page = await accounts.list({ limit, ...(cursor !== undefined ? { cursor } : {}) });
      return printJson(ctx, { accounts: page.accounts.map(accountView), next_cursor: page.nextCursor });
    }
    case 'show': {
      const account = await accounts.get(id);
      if (!account) throw new UsageError(`account show: no account with id "${id}"`);
      return printJson(ctx, { ...accountView(account), key_ids: await accounts.keyIdsOf(id) });
    }
    case 'set': {
      if (name === undefined && emails === undefined && billing === undefined) throw new UsageError('account set: nothing to change (--name, --email, --billing-customer)', 'account');
      const patch = { ...(name !== undefined ? { name } : {}), ...(emails !== undefined ? { emails } : {}), ...(billing !== undefined ? { billingCustomer: billing === '' ? null : billing } : {}) };
      return printJson(ctx, accountView(await accounts.update(id, patch)));
    }
    case 'delete':
      await accounts.delete(id);
      ctx.out(`deleted account ${id}\n`);
  }
}

/** `account pause|settle ID --reason R`: every key of the account (the key admin's pauseAccount/settleAccount). */
async function changeKeys(ctx: CommandContext, sub: 'pause' | 'settle', id: string): Promise<void> {
  const reason = stringOption(ctx, 'reason');
  if (sub === 'pause' && reason === undefined) throw new UsageError('account pause: --reason is required (unpaid_renewal, payment_dispute, leaked or operator)', 'account');
  const admin = await ctx.keyAdmin();
  printJson(ctx, sub === 'pause' ? await admin.pauseAccount(id, reason) : await admin.settleAccount(id, reason));
}

/** Prints a one-time sign-in link; refused (one line) when PORTAL_PUBLIC_URL is unset. */
async function link(ctx: CommandContext, id: string): Promise<void> {
  const { portalPublicUrl } = await import('../../../gateway/config/portal-public-url');
  const base = portalPublicUrl();
  if (base === undefined) throw new UsageError('account link: PORTAL_PUBLIC_URL is not set: the link must name the address holders reach the portal at');
  const minutes = integerOption(ctx, 'minutes');
  const { accounts, linkTokens } = await holderStores(ctx);
  if (!(await accounts.get(id))) throw new UsageError(`account link: no account with id "${id}"`);
  const token = await linkTokens.issue(id, minutes);
  ctx.out(`one-time sign-in link for account ${id}, valid ${minutes ?? 15} minutes, shown once, on the next line:\n${base}/portal/link/${token}\n`);
}

export const account: Command = {
  name: 'account',
  synopsis: 'create ID --name NAME --email ADDR [--email ADDR …] [--billing-customer C] | list | show ID | set ID … | delete ID | link ID [--minutes N] | pause ID --reason R | settle ID [--reason R]',
  summary: 'holder accounts: create, list, show, set, delete; link prints a one-time portal sign-in link; pause, settle every key of one',
  details:
    'An account is a key holder: a name, 1 to 10 email addresses (the identities that may sign in to the portal, compared case-insensitively) and an optional billing customer id. ' +
    'Keys name their account with `keys create|set … --account ID`.\n' +
    '`delete` is refused while a key names the account. `set` replaces the emails when --email is given; --billing-customer "" removes it.\n' +
    '`link` prints PORTAL_PUBLIC_URL/portal/link/<token>: it signs in once, on any instance, for --minutes (default 15, at most 60); only its hash is stored.\n' +
    '`pause ID --reason R` adds the pause reason R to every key of the account; `settle ID --reason R` removes it (without --reason: every reason but leaked, which only a roll clears). ' +
    'Each key changed is one audit entry and one event; the answer lists every key and what changed on it (revoked keys are left alone).',
  options: {
    name: { type: 'string', value: 'NAME', help: 'the holder\'s name (create, set)' },
    email: { type: 'string', multiple: true, value: 'ADDR', help: 'an email address that may sign in; repeat for more, at most 10 (create, set)' },
    'billing-customer': { type: 'string', value: 'C', help: 'the billing system\'s customer id (create, set; "" removes it)' },
    minutes: { type: 'string', value: 'N', help: 'how long the link works, 1..60 minutes (link; default 15)' },
    limit: { type: 'string', value: 'N', help: `accounts per page, ${ACCOUNT_PAGE.min}..${ACCOUNT_PAGE.max} (list; default ${ACCOUNT_PAGE.default})` },
    cursor: { type: 'string', value: 'CURSOR', help: 'next_cursor of the previous page (list)' },
    reason: { type: 'string', value: 'R', help: 'a pause reason: unpaid_renewal, payment_dispute, leaked or operator (pause; settle, where leaving it out settles all but leaked)' },
  },
  positionals: [1, 2],
  run,
};
