import { createMemoryAuditLog } from '../../gateway/audit/memory-audit-log';
import { createMemoryChangeBudget } from '../../gateway/portal/change-budget';

test('memory audit log: holders\' entries are capped apart, so they never push out an operator\'s', async () => {
  const log = createMemoryAuditLog(5);
  log.append({ name: 'otto', channel: 'admin_api' }, 'change', 'k1', { note: { before: null, after: 'x' } });
  for (let i = 0; i < 50; i++) log.append({ name: 'holder:acme:link', channel: 'portal' }, 'change', 'k1', { addresses: { before: [], after: [String(i)] } });
  const page = await log.read({ limit: 100 });
  expect(page.entries.filter((e) => e.actor === 'otto')).toHaveLength(1);
  expect(page.entries.filter((e) => e.channel === 'portal')).toHaveLength(5);
  expect(page.entries[0]!.changes).toEqual({ addresses: { before: [], after: ['49'] } });
});

test('change budget in memory: per account and minute, the limit read at each change', async () => {
  let now = 60_000 * 1000 + 5_000;
  const budget = createMemoryChangeBudget(() => now);
  const taken = async (account: string, perMinute: number, times: number): Promise<number> => {
    let n = 0;
    for (let i = 0; i < times; i++) if (await budget.take(account, perMinute)) n++;
    return n;
  };
  expect(await taken('acme', 30, 40)).toBe(30);
  expect(await taken('other', 30, 5)).toBe(5);
  expect(await taken('acme', 35, 10)).toBe(5); // a reload raised the limit
  expect(budget.retryAfterSeconds()).toBe(55);
  now += 60_000;
  expect(await taken('acme', 30, 40)).toBe(30);
});
