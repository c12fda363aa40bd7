/**
 * Audit exactly once, for every record kind (keys, accounts, subscription requests): each change
 * of a record and its audit entry are one atomic step on every topology, and no re-sent command
 * writes an entry twice. Every kind writes through the one audited write (gateway/audit/
 * audited-write.ts); this suite cuts the store's Redis connection (the admin listener's client
 * settings, through test/kit/cutting-proxy.ts) at each command of a change in turn: before the
 * command reaches Redis, or after Redis ran it but before its answer reaches the client (the
 * client library would re-send it after reconnecting; gateway/redis/connect.ts stops that for
 * written commands). Whatever each call answered, every change that happened has exactly one
 * entry in `lgw:audit`, one that did not has none, and every change answered as done happened.
 * On one Redis and on a Redis Cluster (the records, their pointers and the stream in different slots).
 */
import pino from 'pino';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin, type KeyAdmin } from '../../gateway/keys/key-admin';
import { type RedisClient, whenReady } from '../../gateway/redis/connect';
import { createRedisHolderStores } from '../../gateway/requests/holder-stores';
import { budget, removeTempDirs, writeGatewayConfig } from '../kit/gateway-stack';
import { createCutter, startCutCluster, startCutNode, type Cutter, type CutRedis } from '../kit/cutting-proxy';

jest.setTimeout(budget(600_000));

const silent = pino({ level: 'silent' });
/**
 * The admin listener's Redis client settings (no auto-pipelining), with a shorter command timeout:
 * on one node a command cut after Redis ran it is not re-sent, so its caller waits the whole
 * timeout, and hundreds of cuts at 5 s would take most of an hour (a cluster node's connection
 * fails its written commands at once: gateway/redis/connect.ts). What is asserted does not depend on it.
 */
const ONE_NODE_TIMEOUT_MS = 1000;
const CLUSTER_TIMEOUT_MS = 1500;

type Holders = ReturnType<typeof createRedisHolderStores>;
interface Stores { admin: KeyAdmin; holders: Holders; direct: RedisClient }
interface Case { id: string; action: string; request?: string; hashBefore?: string }
interface Entry { action: string; key_id: string; account_id?: string }

/** One change of one record kind: the state it starts from, the change, whether it is in Redis, and which entries are its. */
interface Change {
  readonly action: string;
  prepare(s: Stores, id: string): Promise<Case>;
  run(s: Stores, c: Case): Promise<unknown>;
  happened(direct: RedisClient, c: Case): Promise<boolean>;
  isEntryOf(e: Entry, c: Case): boolean;
}

/** The JSON object at `key`, unless absent or a tombstone (a deleted record whose entry is not yet in the log). */
async function recordAt(direct: RedisClient, key: string): Promise<Record<string, unknown> | undefined> {
  const json = await direct.get(key);
  const parsed = json === null ? undefined : (JSON.parse(json) as Record<string, unknown>);
  return parsed && parsed.deleted !== true ? parsed : undefined;
}

const newKey = (s: Stores, id: string, account?: string): Promise<unknown> =>
  s.admin.create({ id, tier: 'standard', countries: ['GB'], address: '10.0.0.1', ...(account !== undefined ? { account } : {}) });

/** A key change: from a fresh key (paused first for settle, revoked first for delete). */
const keyChange = (action: string, run: (admin: KeyAdmin, id: string) => Promise<unknown>, happened: (record: Record<string, unknown> | undefined, c: Case) => boolean): Change => ({
  action,
  async prepare(s, id) {
    if (action === 'create') return { id, action };
    await newKey(s, id);
    if (action === 'settle') await s.admin.pause(id, 'payment_dispute');
    if (action === 'delete') await s.admin.revoke(id);
    return { id, action, hashBefore: (await recordAt(s.direct, `lgw:key:${id}`))!.key_sha256 as string };
  },
  run: (s, c) => run(s.admin, c.id),
  happened: async (direct, c) => happened(await recordAt(direct, `lgw:key:${c.id}`), c),
  isEntryOf: (e, c) => e.key_id === c.id && e.action === action,
});

const accountEmail = (id: string): string[] => [`${id.toLowerCase()}@holders.example`];
/** An account change: from a fresh account (none for create). */
const accountChange = (action: string, run: (h: Holders, id: string) => Promise<unknown>, happened: (record: Record<string, unknown> | undefined) => boolean): Change => ({
  action,
  async prepare(s, id) {
    if (action !== 'account.create') await s.holders.accounts.create({ id, name: 'Before', emails: accountEmail(id) });
    return { id, action };
  },
  run: (s, c) => run(s.holders, c.id),
  happened: async (direct, c) => happened(await recordAt(direct, `lgw:account:${c.id}`)),
  isEntryOf: (e, c) => e.action === action && e.account_id === c.id,
});

/** A subscription-request change: from a fresh account with a key (and for an approval a pending request). */
const requestChange = (action: string, run: (h: Holders, c: Case) => Promise<unknown>, happened: (direct: RedisClient, c: Case) => Promise<boolean>): Change => ({
  action,
  async prepare(s, id) {
    await s.holders.accounts.create({ id, name: 'Before', emails: accountEmail(id) });
    await newKey(s, id, id);
    if (action === 'request.create') return { id, action };
    return { id, action, request: (await s.holders.requests.create({ keyId: id, accountId: id, change: { countries: ['FR'] } })).id };
  },
  run: (s, c) => run(s.holders, c),
  happened,
  isEntryOf: (e, c) => e.action === action && e.key_id === c.id && e.account_id === c.id,
});

const askFrance = (h: Holders, c: Case): Promise<unknown> => h.requests.create({ keyId: c.id, accountId: c.id, change: { countries: ['FR'] } });

/** Every record kind and the changes cut in it. */
const KINDS: Record<string, readonly Change[]> = {
  keys: [
    keyChange('create', (admin, id) => admin.create({ id, tier: 'standard', countries: ['GB'], address: '10.0.0.1' }), (r) => r !== undefined),
    keyChange('pause', (admin, id) => admin.pause(id, 'unpaid_renewal'), (r) => r?.status === 'paused'),
    keyChange('settle', (admin, id) => admin.settle(id), (r) => r?.status === 'active'),
    keyChange('roll', (admin, id) => admin.roll(id, 0), (r, c) => r !== undefined && r.key_sha256 !== c.hashBefore),
    keyChange('delete', (admin, id) => admin.delete(id), (r) => r === undefined),
  ],
  accounts: [
    accountChange('account.create', (h, id) => h.accounts.create({ id, name: 'Created', emails: accountEmail(id) }), (r) => r !== undefined),
    accountChange('account.update', (h, id) => h.accounts.update(id, { name: 'After' }), (r) => r?.name === 'After'),
    accountChange('account.delete', (h, id) => h.accounts.delete(id), (r) => r === undefined),
  ],
  requests: [
    requestChange('request.create', askFrance, async (direct, c) => {
      for (const id of await direct.zrange(`lgw:requests:key:${c.id}`, 0, -1)) if (await recordAt(direct, `lgw:request:${id}`)) return true;
      return false;
    }),
    requestChange('request.approve', (h, c) => h.requests.decide(c.request!, 'approved', 'ops'), async (direct, c) => (await recordAt(direct, `lgw:request:${c.request!}`))?.status === 'approved'),
  ],
};

async function streamEntries(direct: RedisClient): Promise<Entry[]> {
  return (await direct.xrange('lgw:audit', '-', '+')).map(([, flat]) => {
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
    return { action: f.action!, key_id: f.key_id!, ...(f.account_id !== undefined ? { account_id: f.account_id } : {}) };
  });
}

/**
 * Prepares a fresh case, uncut. Right after a cut a cluster client may still be following slot
 * redirections ("Too many Cluster redirections"): a preparation that fails is tried again under a
 * new id (the failed one may be half made), so only the cut change itself is judged.
 */
async function prepareFresh(s: Stores, change: Change, base: string): Promise<Case> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await change.prepare(s, attempt === 0 ? base : `${base}-p${attempt}`);
    } catch (err) {
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** Each change at each step, cut each way, until the change no longer reaches the step (it has fewer commands). */
async function changesUnderCuts(s: Stores, client: RedisClient, cutter: Cutter, changes: readonly Change[], prefix: string): Promise<Array<Case & { answered: boolean }>> {
  const outcomes: Array<Case & { answered: boolean }> = [];
  for (const mode of ['after', 'before'] as const) {
    let left = changes;
    for (let step = 1; step <= 80 && left.length; step++) {
      const reaching: Change[] = [];
      for (const change of left) {
        const c = await prepareFresh(s, change, `${prefix}-${changes.indexOf(change)}-${mode}-${step}`);
        cutter.arm(step, mode);
        const answered = await change.run(s, c).then(() => true, () => false);
        if (cutter.fired) reaching.push(change);
        cutter.disarm();
        outcomes.push({ ...c, answered });
        if (!(await whenReady(client, 20_000))) throw new Error('the store client did not reconnect');
      }
      left = reaching;
    }
  }
  return outcomes;
}

/** Reads the log through the key admin until no entry is pending (a read moves them), then checks every outcome. */
async function expectExactlyOnce(s: Stores, changes: readonly Change[], outcomes: Array<Case & { answered: boolean }>, label: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await s.direct.scard('lgw:audit:pending')) > 0) {
    if (Date.now() > deadline) throw new Error('pending audit entries were never moved to the log');
    await s.admin.readAudit({ limit: 1 }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
  }
  const entries = await streamEntries(s.direct);
  const problems: string[] = [];
  for (const o of outcomes) {
    const change = changes.find((c) => c.action === o.action)!;
    const done = await change.happened(s.direct, o);
    const n = entries.filter((e) => change.isEntryOf(e, o)).length;
    if (n !== (done ? 1 : 0)) problems.push(`${o.id}: ${o.action} ${done ? 'happened' : 'did not happen'} (answered ${o.answered ? 'done' : 'failed'}), ${n} entries`);
    if (o.answered && !done) problems.push(`${o.id}: ${o.action} answered as done but did not happen`);
  }
  process.stdout.write(`audit-exactly-once ${label}: ${outcomes.length} cut changes, ${outcomes.filter((o) => o.answered).length} answered done, ${problems.length} problems\n`);
  expect(problems).toEqual([]);
  for (const change of changes) expect(outcomes.filter((o) => o.action === change.action && o.answered).length).toBeGreaterThan(0);
}

/** The suite of one topology: `start` gives the store's client (through the cutting proxies) and a direct one. */
function everyKindOn(topology: string, prefix: string, start: (cutter: ReturnType<typeof createCutter>) => Promise<CutRedis>): void {
  describe(topology, () => {
    const cutter = createCutter();
    let started: CutRedis;
    let stores: Stores;

    beforeAll(async () => {
      started = await start(cutter);
      const admin = createKeyAdmin(started.client, loadGatewayConfig(writeGatewayConfig()), silent);
      stores = { admin, holders: createRedisHolderStores(started.client, admin), direct: started.direct };
    }, 60_000);
    afterAll(async () => {
      await started?.stop();
      removeTempDirs();
    });

    it.each(Object.keys(KINDS))('%s: every change that happened has exactly one entry, whatever step its connection was cut at', async (kind) => {
      const changes = KINDS[kind]!;
      const outcomes = await changesUnderCuts(stores, started.client, cutter, changes, `${prefix}-${kind}`);
      expect(outcomes.length).toBeGreaterThan(10 * changes.length);
      await expectExactlyOnce(stores, changes, outcomes, `${topology}, ${kind}`);
    });
  });
}

everyKindOn('one Redis', 'one', (cutter) => startCutNode(cutter, ONE_NODE_TIMEOUT_MS));
everyKindOn('a Redis Cluster', 'cl', (cutter) => startCutCluster(cutter, CLUSTER_TIMEOUT_MS));
