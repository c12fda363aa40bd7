import { integerOption, printJson, stringOption, type Command } from '../command';
import { holderStores } from '../holders';

export const requests: Command = {
  name: 'requests',
  synopsis: '[--status pending|approved|declined] [--limit N [--cursor CURSOR]]',
  summary: 'the holders\' subscription requests, newest first',
  details: 'Prints {"requests": [...], "next_cursor"}; pass next_cursor back with --cursor for the next page (null on the last). Decide with `keys approve|decline REQUEST_ID`.',
  options: {
    status: { type: 'string', value: 'S', help: 'only requests in this state: pending, approved or declined' },
    limit: { type: 'string', value: 'N', help: 'requests per page, 1..1000 (default 100)' },
    cursor: { type: 'string', value: 'CURSOR', help: 'next_cursor of the previous page' },
  },
  async run(ctx) {
    const { checkStatus, requestView } = await import('../../../gateway/requests/subscription-request');
    const status = checkStatus(stringOption(ctx, 'status'));
    const cursor = stringOption(ctx, 'cursor');
    const page = await (await holderStores(ctx)).requests.list({ limit: integerOption(ctx, 'limit') ?? 100, ...(status ? { status } : {}), ...(cursor !== undefined ? { cursor } : {}) });
    printJson(ctx, { requests: page.requests.map(requestView), next_cursor: page.nextCursor });
  },
};

/** `keys approve|decline REQUEST_ID`: decides a pending request (once); approval changes the key. */
function decision(name: 'approve' | 'decline', outcome: 'approved' | 'declined', summary: string): Command {
  return {
    name,
    synopsis: 'REQUEST_ID',
    summary,
    details: 'A request is decided once: deciding it again is refused. Recorded in the audit log as the OS user on this host.',
    positionals: [1, 1],
    async run(ctx) {
      const { currentActor } = await import('../../../gateway/audit/actor');
      const { requestView } = await import('../../../gateway/requests/subscription-request');
      printJson(ctx, requestView(await (await holderStores(ctx)).requests.decide(ctx.args[0]!, outcome, currentActor().name)));
    },
  };
}

export const approve = decision('approve', 'approved', 'approves a pending subscription request: the change is applied to the same key');
export const decline = decision('decline', 'declined', 'declines a pending subscription request');
