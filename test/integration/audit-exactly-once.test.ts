/**
 * Audit exactly once (issue 25 item 4): a key change and its audit entry are one atomic step on
 * every topology, and no re-sent command writes an entry twice (pause, settle, roll, delete). The key admin's Redis connection
 * (the gateway's own client settings) goes through a proxy that cuts it at each command of a
 * change in turn: before the command reaches Redis, or after Redis ran it but before its answer
 * reaches the client (the client library then re-sends it after reconnecting). Whatever each call
 * answered, every change that happened has exactly one entry, and one that did not has none; and
 * every change answered as done happened. On one Redis and on a Redis Cluster.
 */
import Redis from 'ioredis';
import pino from 'pino';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { parseRedisTopology } from '../../gateway/config/redis-env';
import { createKeyAdmin, type KeyAdmin } from '../../gateway/keys/key-admin';
import { connectRedis, type RedisClient, whenReady } from '../../gateway/redis/connect';
import { budget, removeTempDirs, writeGatewayConfig } from '../kit/gateway-stack';
import { startRedis, type RedisServer } from '../kit/redis-server';
import { createCutter, cuttingProxy, startCutCluster, type CutCluster, type Cutter } from '../kit/cutting-proxy';

jest.setTimeout(budget(240_000));

const silent = pino({ level: 'silent' });
/** The admin listener's Redis client settings (gateway/startup/): no auto-pipelining, a 5 s command timeout. */
const ADMIN_TIMEOUT_MS = 5000;
/**
 * On one node, a shorter command timeout: a command cut after Redis ran it is never re-sent
 * (gateway/redis/connect.ts), so its caller waits the whole timeout, and 5 s a cut makes the suite
 * minutes long. What is asserted does not depend on it. (The cluster keeps 5 s: its slot refreshes
 * after a cut need the time.)
 */
const ONE_NODE_TIMEOUT_MS = 1000;

interface Entry { action: string; key_id: string }

/** Every entry of the log, read straight from the stream by the test's own client. */
async function streamEntries(direct: RedisClient): Promise<Entry[]> {
  const rows = await direct.xrange('lgw:audit', '-', '+');
  return rows.map(([, flat]) => {
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
    return { action: f.action!, key_id: f.key_id! };
  });
}

type Action = 'pause' | 'settle' | 'roll' | 'delete';
interface Outcome { id: string; action: Action; answered: boolean; hashBefore: string }

const recordOf = async (direct: RedisClient, id: string): Promise<{ key_sha256: string; status: string } | undefined> => {
  const json = await direct.get(`lgw:key:${id}`);
  const parsed = json === null ? undefined : (JSON.parse(json) as { key_sha256?: string; status: string; deleted?: true });
  return parsed && !parsed.deleted ? (parsed as { key_sha256: string; status: string }) : undefined;
};

/** Puts a fresh key in the state the action starts from. */
async function prepare(admin: KeyAdmin, id: string, action: Action): Promise<void> {
  await admin.create({ id, tier: 'standard', countries: ['GB'], address: '10.0.0.1' });
  if (action === 'settle') await admin.pause(id, 'payment_dispute');
  if (action === 'delete') await admin.revoke(id);
}

/**
 * Prepares a fresh key, uncut. Right after a cut a cluster client may still be following slot
 * redirections ("Too many Cluster redirections"): a preparation that fails is tried again under a
 * new id (the failed one may be half made), so only the cut change itself is judged. Returns the id.
 */
async function prepareFresh(admin: KeyAdmin, base: string, action: Action): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const id = attempt === 0 ? base : `${base}-p${attempt}`;
    try {
      await prepare(admin, id, action);
      return id;
    } catch (err) {
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

const run = (admin: KeyAdmin, id: string, action: Action): Promise<unknown> =>
  action === 'pause' ? admin.pause(id, 'unpaid_renewal') : action === 'settle' ? admin.settle(id) : action === 'roll' ? admin.roll(id, 0) : admin.delete(id);

/**
 * For each step of the write and each way of cutting there: pauses a fresh key, and settles a
 * fresh paused key, the connection cut at that step; returns what each call answered. Stops when
 * a change no longer reaches the step (it has fewer commands).
 */
async function changesUnderCuts(admin: KeyAdmin, client: RedisClient, direct: RedisClient, cutter: Cutter, prefix: string): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const mode of ['after', 'before'] as const) {
    for (let step = 1; step <= 40; step++) {
      let reached = false;
      for (const action of ['pause', 'settle', 'roll', 'delete'] as const) {
        const id = await prepareFresh(admin, `${prefix}-${action}-${mode}-${step}`, action);
        const hashBefore = (await recordOf(direct, id))!.key_sha256;
        cutter.arm(step, mode);
        const answered = await run(admin, id, action).then(() => true, () => false);
        reached ||= cutter.fired;
        cutter.disarm();
        outcomes.push({ id, action, answered, hashBefore });
        if (!(await whenReady(client, 20_000))) throw new Error('the admin client did not reconnect');
      }
      if (!reached) break;
    }
  }
  return outcomes;
}

/** Reads the log through the key admin until no entry is pending (a read moves them), then checks every outcome. */
async function expectExactlyOnce(admin: KeyAdmin, direct: RedisClient, outcomes: Outcome[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await direct.scard('lgw:audit:pending')) > 0) {
    if (Date.now() > deadline) throw new Error('pending audit entries were never moved to the log');
    await admin.readAudit({ limit: 1 }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
  }
  const entries = await streamEntries(direct);
  const problems: string[] = [];
  for (const { id, action, answered, hashBefore } of outcomes) {
    const record = await recordOf(direct, id);
    const happened = action === 'pause' ? record?.status === 'paused'
      : action === 'settle' ? record?.status === 'active'
      : action === 'roll' ? record!.key_sha256 !== hashBefore
      : record === undefined;
    const n = entries.filter((e) => e.key_id === id && e.action === action).length;
    if (n !== (happened ? 1 : 0)) problems.push(`${id}: ${action} ${happened ? 'happened' : 'did not happen'}, ${n} entries`);
    if (answered && !happened) problems.push(`${id}: ${action} answered as done but did not happen`);
  }
  expect(problems).toEqual([]);
  expect(outcomes.filter((o) => o.answered).length).toBeGreaterThan(0);
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
    client = connectRedis(parseRedisTopology({ REDIS_URL: `redis://127.0.0.1:${proxy.port}`, REDIS_COMMAND_TIMEOUT_MS: ONE_NODE_TIMEOUT_MS })!, silent, 'admin', { autoPipelining: false });
    await whenReady(client, 10_000);
  });
  afterAll(async () => {
    client?.disconnect();
    direct?.disconnect();
    proxy?.close();
    await server?.stop();
    removeTempDirs();
  });

  it('every change that happened has exactly one entry, whatever step its connection was cut at', async () => {
    const admin = createKeyAdmin(client, loadGatewayConfig(writeGatewayConfig()), silent);
    const outcomes = await changesUnderCuts(admin, client, direct, cutter, 'one');
    expect(outcomes.length).toBeGreaterThan(20);
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

  it('every change that happened has exactly one entry, whatever step its connection was cut at', async () => {
    const admin = createKeyAdmin(cut.client, loadGatewayConfig(writeGatewayConfig()), silent);
    const outcomes = await changesUnderCuts(admin, cut.client, cut.direct, cutter, 'cl');
    expect(outcomes.length).toBeGreaterThan(20);
    await expectExactlyOnce(admin, cut.direct, outcomes);
  });
});
