/**
 * Audit exactly once for holders' changes (issue 25 item 4, CONTRACT parts 7 and 8): account
 * create, update and delete, and subscription-request create and approve, each with the key
 * store's connection cut at each command in turn (test/kit/cutting-proxy.ts: before the command
 * reaches Redis, or after Redis ran it and before its answer comes back). Whatever each call
 * answered, every change that happened has exactly one entry in `lgw:audit`, one that did not has
 * none, and every change answered as done happened. On one Redis and on a Redis Cluster (the
 * records and the stream in different slots).
 */
import Redis from 'ioredis';
import pino from 'pino';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { parseRedisTopology } from '../../gateway/config/redis-env';
import { createKeyAdmin, type KeyAdmin } from '../../gateway/keys/key-admin';
import { connectRedis, type RedisClient, whenReady } from '../../gateway/redis/connect';
import { createRedisHolderStores } from '../../gateway/requests/holder-stores';
import { budget, removeTempDirs, writeGatewayConfig } from '../kit/gateway-stack';
import { createCutter, cuttingProxy, startCutCluster, type CutCluster, type Cutter } from '../kit/cutting-proxy';
import { startRedis, type RedisServer } from '../kit/redis-server';

jest.setTimeout(budget(600_000));

const silent = pino({ level: 'silent' });
/**
 * The admin listener's Redis client settings (no auto-pipelining), with a shorter command timeout:
 * a cut command fails by its timeout (it is not re-sent), and 400 cuts at 5 s would take half an hour.
 */
const ADMIN_TIMEOUT_MS = 1500;
const ACTIONS = ['account.create', 'account.update', 'account.delete', 'request.create', 'request.approve'] as const;
type Action = (typeof ACTIONS)[number];
type Holders = ReturnType<typeof createRedisHolderStores>;
interface Case { id: string; action: Action; request?: string }
interface Outcome extends Case { answered: boolean }
interface Entry { action: string; key_id: string; account_id?: string }

async function streamEntries(direct: RedisClient): Promise<Entry[]> {
  return (await direct.xrange('lgw:audit', '-', '+')).map(([, flat]) => {
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
    return { action: f.action!, key_id: f.key_id!, ...(f.account_id !== undefined ? { account_id: f.account_id } : {}) };
  });
}

/** The JSON object at `key`, unless absent or a tombstone (a deleted record whose entry is not yet in the log). */
async function recordAt(direct: RedisClient, key: string): Promise<Record<string, unknown> | undefined> {
  const json = await direct.get(key);
  const parsed = json === null ? undefined : (JSON.parse(json) as Record<string, unknown>);
  return parsed && parsed.deleted !== true ? parsed : undefined;
}

/** A fresh account (and for requests a key of its, and for an approval a pending request) in the state the action starts from. */
async function prepare(admin: KeyAdmin, holders: Holders, id: string, action: Action): Promise<Case> {
  if (action === 'account.create') return { id, action };
  await holders.accounts.create({ id, name: 'Before', emails: [`${id.toLowerCase()}@holders.example`] });
  if (action.startsWith('account.')) return { id, action };
  await admin.create({ id, tier: 'standard', countries: ['GB'], address: '10.0.0.1', account: id });
  if (action === 'request.create') return { id, action };
  const request = await holders.requests.create({ keyId: id, accountId: id, change: { countries: ['FR'] } });
  return { id, action, request: request.id };
}

function run(holders: Holders, c: Case): Promise<unknown> {
  switch (c.action) {
    case 'account.create': return holders.accounts.create({ id: c.id, name: 'Created', emails: [`${c.id.toLowerCase()}@holders.example`] });
    case 'account.update': return holders.accounts.update(c.id, { name: 'After' });
    case 'account.delete': return holders.accounts.delete(c.id);
    case 'request.create': return holders.requests.create({ keyId: c.id, accountId: c.id, change: { countries: ['FR'] } });
    case 'request.approve': return holders.requests.decide(c.request!, 'approved', 'ops');
  }
}

/** Whether the change of `c` is in Redis. */
async function happened(direct: RedisClient, c: Case): Promise<boolean> {
  const account = await recordAt(direct, `lgw:account:${c.id}`);
  if (c.action === 'account.create') return account !== undefined;
  if (c.action === 'account.update') return account?.name === 'After';
  if (c.action === 'account.delete') return account === undefined;
  if (c.action === 'request.approve') return (await recordAt(direct, `lgw:request:${c.request!}`))?.status === 'approved';
  for (const id of await direct.zrange(`lgw:requests:key:${c.id}`, 0, -1)) if (await recordAt(direct, `lgw:request:${id}`)) return true;
  return false;
}

/** Each action at each step, cut each way, until the action no longer reaches the step. */
async function changesUnderCuts(admin: KeyAdmin, holders: Holders, client: RedisClient, cutter: Cutter, prefix: string): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const mode of ['after', 'before'] as const) {
    let left: readonly Action[] = ACTIONS;
    for (let step = 1; step <= 80 && left.length; step++) {
      const reaching: Action[] = [];
      for (const action of left) {
        const c = await prepare(admin, holders, `${prefix}-${ACTIONS.indexOf(action)}-${mode}-${step}`, action);
        cutter.arm(step, mode);
        const answered = await run(holders, c).then(() => true, () => false);
        if (cutter.fired) reaching.push(action);
        cutter.disarm();
        outcomes.push({ ...c, answered });
        if (!(await whenReady(client, 20_000))) throw new Error('the admin client did not reconnect');
      }
      left = reaching; // an action with fewer commands than `step` is not cut any more
    }
  }
  return outcomes;
}

/** Reads the log through the key admin until no entry is pending, then checks every outcome; returns the counts. */
async function expectExactlyOnce(admin: KeyAdmin, direct: RedisClient, outcomes: Outcome[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await direct.scard('lgw:audit:pending')) > 0 && Date.now() < deadline) {
    await admin.readAudit({ limit: 1 }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
  }
  const entries = await streamEntries(direct);
  const problems: string[] = [];
  const counts = { lost: 0, doubled: 0, phantom: 0, answeredNotDone: 0 };
  for (const o of outcomes) {
    const done = await happened(direct, o);
    const n = entries.filter((e) => e.action === o.action && (o.action.startsWith('account.') ? e.account_id === o.id : e.key_id === o.id && e.account_id === o.id)).length;
    if (n !== (done ? 1 : 0)) {
      problems.push(`${o.id}: ${o.action} ${done ? 'happened' : 'did not happen'} (answered ${o.answered ? 'done' : 'failed'}), ${n} entries`);
      if (done && n === 0) counts.lost++;
      else if (done) counts.doubled++;
      else counts.phantom++;
    }
    if (o.answered && !done) {
      problems.push(`${o.id}: ${o.action} answered as done but did not happen`);
      counts.answeredNotDone++;
    }
  }
  process.stdout.write(`audit-exactly-once-holders: ${outcomes.length} changes (${outcomes.filter((o) => o.answered).length} answered done): ${JSON.stringify(counts)}\n`);
  expect(problems).toEqual([]);
  for (const action of ACTIONS) expect(outcomes.filter((o) => o.action === action && o.answered).length).toBeGreaterThan(0);
}

describe('one Redis', () => {
  let server: RedisServer;
  let proxy: { port: number; close(): void };
  let client: RedisClient;
  let direct: Redis;
  const cutter = createCutter();

  beforeAll(async () => {
    server = await startRedis();
    proxy = await cuttingProxy(server.port, cutter);
    direct = new Redis(server.url);
    client = connectRedis(parseRedisTopology({ REDIS_URL: `redis://127.0.0.1:${proxy.port}`, REDIS_COMMAND_TIMEOUT_MS: ADMIN_TIMEOUT_MS })!, silent, 'admin', { autoPipelining: false });
    await whenReady(client, 10_000);
  });
  afterAll(async () => {
    client?.disconnect();
    direct?.disconnect();
    proxy?.close();
    await server?.stop();
    removeTempDirs();
  });

  it('every account and request change that happened has exactly one entry, whatever step its connection was cut at', async () => {
    const admin = createKeyAdmin(client, loadGatewayConfig(writeGatewayConfig()), silent);
    const outcomes = await changesUnderCuts(admin, createRedisHolderStores(client, admin), client, cutter, 'one');
    expect(outcomes.length).toBeGreaterThan(50);
    await expectExactlyOnce(admin, direct, outcomes);
  });
});

describe('a Redis Cluster', () => {
  let cut: CutCluster;
  const cutter = createCutter();

  beforeAll(async () => {
    cut = await startCutCluster(cutter, ADMIN_TIMEOUT_MS);
  }, 60_000);
  afterAll(() => cut?.stop());

  it('every account and request change that happened has exactly one entry, whatever step its connection was cut at', async () => {
    const admin = createKeyAdmin(cut.client, loadGatewayConfig(writeGatewayConfig()), silent);
    const outcomes = await changesUnderCuts(admin, createRedisHolderStores(cut.client, admin), cut.client, cutter, 'cl');
    expect(outcomes.length).toBeGreaterThan(50);
    await expectExactlyOnce(admin, cut.direct, outcomes);
  });
});
