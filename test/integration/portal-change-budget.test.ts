/**
 * Item 8 of the fourth security round: a holder must not push operators' entries out of the audit
 * log. (1) The portal budgets changes per account (`portal.self_service.changes_per_minute`,
 * default 30 a minute, shared in Redis by every instance): past it a change answers 429 with a
 * page and Retry-After, and nothing is written. (2) Holders' entries have their own stream, capped
 * on its own (AUDIT_MAX_ENTRIES each), so however many holders change keys, an operator's entry
 * stays. Real redis-server, a real gateway with the portal, holders signed in with one-time links.
 */
import path from 'node:path';
import { runAs } from '../../gateway/audit/actor';
import { awayFromMinuteEdge, makeTempDir, removeTempDirs, startGateway, writeKeysFile, type Proc } from '../kit/gateway-stack';
import { announcedUrl } from '../kit/log-lines';
import { holderFromLink, operatorOf, portalEnv, postAs, writePortalConfig, type Holder } from '../kit/portal';
import { startRedis, type RedisServer } from '../kit/redis-server';

jest.setTimeout(120_000);

/** Small, so a test fills it: with MAXLEN ~ Redis keeps between this and about 100 more. */
const AUDIT_MAX_ENTRIES = 100;
const ACCOUNTS = 14;
let redisServer: RedisServer;
let gateway: Proc;
let portal: string;
let operator: Awaited<ReturnType<typeof operatorOf>>;

beforeAll(async () => {
  redisServer = await startRedis();
  const configFile = path.join(makeTempDir(), 'gateway.yaml');
  writePortalConfig(configFile);
  const env = await portalEnv();
  portal = env.PORTAL_PUBLIC_URL;
  gateway = await startGateway({
    backendUrl: 'http://127.0.0.1:9', keysFile: writeKeysFile([]), gatewayConfig: configFile,
    env: { KEY_STORE: 'redis', REDIS_URL: redisServer.url, AUDIT_MAX_ENTRIES: String(AUDIT_MAX_ENTRIES), ...env },
  });
  await announcedUrl(gateway, 'portal listening');
  operator = await operatorOf(redisServer.url, configFile);
  for (let i = 0; i < ACCOUNTS; i++) {
    await operator.accounts.create({ id: `acct-${i}`, name: `Account ${i}`, emails: [`ops${i}@acct.test`] });
    await operator.key(`acct-${i}-key`, `acct-${i}`);
  }
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  operator?.close();
  await redisServer?.stop();
  removeTempDirs();
});

/** One address change of the account's key (alternating, so each is a change and an audit entry). */
const changeAddresses = (h: Holder, account: number, n: number) =>
  postAs(h, portal, portal, `/portal/keys/acct-${account}-key/addresses`, { addresses: n % 2 ? '127.0.0.1' : '127.0.0.2' });

test('one account: 30 changes in a minute, then 429 with a page and Retry-After, nothing written', async () => {
  await awayFromMinuteEdge(20_000);
  const h = await holderFromLink(portal, portal, await operator.links.issue('acct-0'));
  const statuses: number[] = [];
  for (let n = 0; n < 40; n++) statuses.push((await changeAddresses(h, 0, n)).status);
  process.stdout.write(`item 8: 40 address changes from one session in a minute: ${statuses.filter((s) => s === 303).length} applied, ${statuses.filter((s) => s === 429).length} × 429\n`);
  expect(statuses).toEqual([...Array(30).fill(303), ...Array(10).fill(429)]);
  const over = await changeAddresses(h, 0, 40);
  expect(over.status).toBe(429);
  expect(over.headers['retry-after']).toMatch(/^\d+$/);
  expect(over.headers['content-type']).toMatch(/^text\/html/);
  expect(over.text).toContain('30 changes in this minute');
  const entries = (await operator.admin.readAudit({ keyId: 'acct-0-key', limit: 1000 })).entries.filter((e) => e.channel === 'portal');
  expect(entries).toHaveLength(30);
});

test('an operator\'s entry stays however many changes holders make; the log still reads newest first across both', async () => {
  await runAs({ name: 'otto', channel: 'admin_api' }, () => operator.admin.set('acct-13-key', { note: 'operator change' }));
  let applied = 0;
  for (let i = 1; i < ACCOUNTS; i++) {
    await awayFromMinuteEdge(5_000);
    const h = await holderFromLink(portal, portal, await operator.links.issue(`acct-${i}`));
    for (let n = 0; n < 30; n++) if ((await changeAddresses(h, i, n)).status === 303) applied++;
  }
  const page = await operator.admin.readAudit({ limit: 1000 });
  const kept = page.entries.filter((e) => e.actor === 'otto');
  process.stdout.write(`item 8: ${applied} holder changes after one operator change, AUDIT_MAX_ENTRIES=${AUDIT_MAX_ENTRIES}: the operator's entry ${kept.length ? 'kept' : 'evicted'}; ${page.entries.length} entries readable\n`);
  expect(applied).toBeGreaterThan(3 * AUDIT_MAX_ENTRIES);
  expect(kept).toHaveLength(1);
  expect(kept[0]!.changes).toEqual({ note: { before: null, after: 'operator change' } });
  // One log to read: holders' entries too, newest first, and the cursor pages through both.
  expect(page.entries[0]!.channel).toBe('portal');
  const ids = page.entries.map((e) => e.id);
  const byTime = [...page.entries].sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0)).map((e) => e.id);
  expect(ids).toEqual(byTime);
  const first = await operator.admin.readAudit({ limit: 10 });
  const rest = await operator.admin.readAudit({ limit: 1000, cursor: first.next_cursor! });
  expect([...first.entries, ...rest.entries].map((e) => e.id)).toEqual(ids);
});
