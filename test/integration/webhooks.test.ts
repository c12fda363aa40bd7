/**
 * Quota notifications and key events against a local receiver that verifies every delivery with
 * the standardwebhooks library, three gateway instances on one real redis-server: exactly one event
 * per threshold under 500 concurrent requests; key events from the admin API and the CLI, with no
 * key value or hash; a receiver down then up (all arrive, none twice under one webhook-id); dead
 * letters listed and re-sent (admin API and CLI); a receiver that never answers (public p99 beside
 * a gateway without webhooks, reported; deliveries in flight and memory bounded); and the gateways
 * killed with events pending, a new one started: they still arrive.
 */
import { readyAdminUrl } from '../kit/admin-api';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Redis from 'ioredis';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import {
  awayFromMinuteEdge, budget, cursorSecret, eventually, getWithKey, removeTempDirs, sha256Hex, type Proc,
} from '../kit/gateway-stack';
import { runKeysCli } from '../kit/keys-cli';
import type { RedisServer } from '../kit/redis-server';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';
import { webhookKeys } from '../../gateway/webhooks/redis-webhook-queue';
import { adminConformingFetch } from '../kit/openapi-conformance';

/** Every admin answer is checked against openapi/admin.yaml (a departure throws). */
const adminFetch = adminConformingFetch();

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

interface Delivery {
  id: string;
  body: string;
  headers: Record<string, string>;
  event: { type: string; timestamp: string; data: Record<string, unknown> };
  answered: number;
  at: number;
}

/** The receiver: verifies each delivery's signature, answers per `mode`, records everything. */
class Receiver {
  mode: 'ok' | 'down' | 'hang' = 'ok';
  /** Events about these key ids are refused (500) whatever the mode. */
  refuseKeys = new Set<string>();
  deliveries: Delivery[] = [];
  unverified = 0;
  open = 0;
  maxOpen = 0;
  private readonly verifier = new Webhook(SECRET);
  private readonly hanging: http.ServerResponse[] = [];
  readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      let event: Delivery['event'];
      try {
        event = this.verifier.verify(body, headers) as Delivery['event'];
      } catch {
        this.unverified++;
        res.writeHead(400).end();
        return;
      }
      const status = this.mode === 'down' || this.refuseKeys.has(event.data.key_id as string) ? 503 : this.mode === 'hang' ? 0 : 204;
      const delivery: Delivery = { id: headers['webhook-id']!, body, headers, event, answered: 0, at: Date.now() };
      this.deliveries.push(delivery);
      if (status === 0) {
        this.hanging.push(res);
        return;
      }
      // Answered only if the answer reached the gateway before it gave up on this attempt (this
      // process also drives the load, so it can lag): an attempt the gateway abandoned is retried.
      res.once('finish', () => (delivery.answered = status));
      res.writeHead(status).end();
    });
  });
  url = '';

  async start(): Promise<void> {
    this.server.on('connection', (socket) => {
      this.open++;
      this.maxOpen = Math.max(this.maxOpen, this.open);
      socket.on('close', () => this.open--);
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }
  accepted(): Delivery[] {
    return this.deliveries.filter((d) => d.answered >= 200 && d.answered < 300);
  }
  release(): void {
    for (const res of this.hanging.splice(0)) res.destroy();
  }
  async stop(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

let stack: RedisStack;
let redisServer: RedisServer;
let redis: Redis;
let gateways: Proc[] = [];
let adminUrl: string;
let gatewayConfig: string;
const receiver = new Receiver();
const secret = cursorSecret();

/** Webhooks on (the stack gives every gateway REDIS_URL, KEY_STORE=redis and a 3 s command timeout). */
const webhookEnv = (): Record<string, string> => ({
  WEBHOOK_URL: receiver.url,
  WEBHOOK_SECRET: SECRET,
  // Generous: the receiver runs in the test process, which also sends the load.
  WEBHOOK_TIMEOUT_MS: '5000',
  WEBHOOK_RETRY_BASE_MS: '100',
  WEBHOOK_RETRY_MAX_MS: '400',
  WEBHOOK_GIVE_UP_AFTER_MS: '20000', // long enough for the down-then-up test on a loaded machine
  WEBHOOK_POLL_MS: '100',
});

const startOne = (extra: Record<string, string> = {}): Promise<Proc> => stack.startGateway({ ...webhookEnv(), ...extra });

beforeAll(async () => {
  await receiver.start();
  stack = await startRedisStack({ cursorSecret: secret, env: { REDIS_COMMAND_TIMEOUT_MS: '3000' }, gateways: [] });
  ({ redisServer, redis, gatewayConfig } = stack);
  gateways = await Promise.all([startOne({ ADMIN_TOKEN, ADMIN_PORT: '0' }), startOne(), startOne()]);
  adminUrl = await readyAdminUrl(gateways[0]!, ADMIN_TOKEN);
  // Every instance announced that it delivers (the key tools queue key events only then).
  await eventually('the delivery marker', async () => (await redis.exists(webhookKeys.on)) === 1, DELIVERY);
}, budget(60_000));

afterAll(async () => {
  await stack?.stop();
  await receiver.stop();
  removeTempDirs();
});

const admin = (method: string, url: string, body?: unknown) =>
  adminFetch(`${adminUrl}${url}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

async function createKey(id: string, extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await admin('POST', '/admin/keys', { id, tier: 'standard', countries: ['GB'], address: '127.0.0.1', ...extra });
  expect(answer.status).toBe(201);
  return ((await answer.json()) as { key: string }).key;
}

const cli = (args: string[]) => runKeysCli(redisServer.url, args, { GATEWAY_CONFIG: gatewayConfig });

/** How long a delivery may take on an idle machine (scaled by the load). */
const DELIVERY = { timeoutMs: 20_000 };

const about = (keyId: string, type?: string) => receiver.accepted().filter((d) => d.event.data.key_id === keyId && (!type || d.event.type === type));
const figures: Record<string, unknown> = {};
afterAll(() => process.stdout.write(`webhook figures: ${JSON.stringify(figures)}\n`));

describe('quota.threshold', () => {
  const burst = (value: string, n: number) =>
    Promise.all(Array.from({ length: n }, (_, i) => getWithKey(gateways[i % 3]!.url, '/v1/ping', value, { timeoutMs: 20_000 })));
  const utcStart = (y: number, m: number, d: number): string => new Date(Date.UTC(y, m, d)).toISOString();

  it('exactly one event per threshold crossed, with 500 concurrent requests over three instances (daily and monthly)', async () => {
    await awayFromMinuteEdge(10_000);
    const day = await createKey('wh-day', { per_minute: 100_000, per_day: 400, per_month: 1_000_000 });
    const month = await createKey('wh-month', { per_minute: 100_000, per_day: 100_000, per_month: 150 });
    const started = Date.now();
    const [dayAnswers, monthAnswers] = await Promise.all([burst(day, 500), burst(month, 200)]);
    expect(dayAnswers.filter((a) => a.status === 200)).toHaveLength(400);
    expect(monthAnswers.filter((a) => a.status === 200)).toHaveLength(150);
    await eventually('three daily and three monthly events', () => about('wh-day', 'quota.threshold').length >= 3 && about('wh-month', 'quota.threshold').length >= 3, DELIVERY);
    figures.thresholdsDeliveredMs = Date.now() - started;
    // Time for a duplicate to show up, were there one (retries run every 100 ms).
    await new Promise((r) => setTimeout(r, 1500));
    const now = new Date();
    const check = (keyId: string, window: 'day' | 'month', limit: number, resetsAt: string) => {
      const events = about(keyId, 'quota.threshold');
      expect(events.map((d) => d.event.data.threshold).sort((a, b) => Number(a) - Number(b))).toEqual([80, 90, 100]);
      expect(new Set(events.map((d) => d.id)).size).toBe(3);
      for (const { event } of events) {
        expect(event.data).toEqual({ key_id: keyId, window, threshold: event.data.threshold, used: Math.ceil((Number(event.data.threshold) * limit) / 100), limit, resets_at: resetsAt });
      }
    };
    check('wh-day', 'day', 400, utcStart(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
    check('wh-month', 'month', 150, utcStart(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    // The daily window of the monthly key never passed 80 %.
    expect(about('wh-month').filter((d) => d.event.data.window === 'day')).toEqual([]);
  }, budget(60_000));
});

describe('key events', () => {
  it('from the admin API and the CLI, carrying ids and changed fields, never a key value or hash', async () => {
    const value = await createKey('wh-events');
    expect((await admin('PATCH', '/admin/keys/wh-events', { countries: ['GB', 'FR'], per_day: 5000 })).status).toBe(200);
    expect((await admin('POST', '/admin/keys/wh-events/pause', { reason: 'payment_dispute' })).status).toBe(200);
    expect((await cli(['settle', 'wh-events'])).code).toBe(0);
    const rolled = await admin('POST', '/admin/keys/wh-events/roll', { grace_seconds: 60 });
    const newValue = ((await rolled.json()) as { key: string }).key;
    expect((await cli(['revoke', 'wh-events'])).code).toBe(0);
    expect(await cli(['delete', 'wh-events'])).toMatchObject({ code: 0, stderr: '' });
    const types = ['key.created', 'key.changed', 'key.paused', 'key.settled', 'key.rolled', 'key.revoked', 'key.deleted'];
    await eventually('seven key events', () => about('wh-events').length >= types.length, DELIVERY);
    const events = about('wh-events').sort((a, b) => (a.event.timestamp < b.event.timestamp ? -1 : 1));
    expect(events.map((d) => d.event.type)).toEqual(types);
    const data = Object.fromEntries(events.map((d) => [d.event.type, d.event.data]));
    expect(data['key.created']).toMatchObject({ key_id: 'wh-events', tier: 'standard', countries: ['GB'], status: 'active', limits: expect.any(Object) });
    expect(data['key.changed']).toEqual({ key_id: 'wh-events', countries: ['GB', 'FR'], per_day: 5000 });
    expect(data['key.paused']).toEqual({ key_id: 'wh-events', status: 'paused', pause_reasons: ['payment_dispute'], pause_reason: 'payment_dispute', added: ['payment_dispute'] });
    expect(data['key.settled']).toEqual({ key_id: 'wh-events', status: 'active', pause_reasons: [], settled: ['payment_dispute'] });
    expect(data['key.rolled']).toEqual({ key_id: 'wh-events', previous_key_valid_until: expect.any(String) });
    expect(data['key.revoked']).toEqual({ key_id: 'wh-events', status: 'revoked' });
    expect(data['key.deleted']).toEqual({ key_id: 'wh-events' });
    const all = events.map((d) => d.body).join('\n');
    for (const secretText of [value, newValue, sha256Hex(value), sha256Hex(newValue)]) expect(all).not.toContain(secretText);
    expect(all).not.toMatch(/[0-9a-f]{64}/);
  }, budget(60_000));
});

describe('a receiver down for a while', () => {
  it('then up: every event arrives, none twice under the same webhook-id', async () => {
    receiver.mode = 'down';
    const ids = Array.from({ length: 12 }, (_, i) => `wh-down-${i}`);
    for (const id of ids) await createKey(id);
    await eventually('every event refused at least twice', () => ids.every((id) => receiver.deliveries.filter((d) => d.event.data.key_id === id).length >= 2), DELIVERY);
    const upAt = Date.now();
    receiver.mode = 'ok';
    await eventually('all arrived', () => ids.every((id) => about(id).length >= 1), DELIVERY);
    figures.afterReceiverUpMs = Date.now() - upAt;
    await new Promise((r) => setTimeout(r, 1500));
    for (const id of ids) expect(about(id)).toHaveLength(1);
    const perId = new Map<string, number>();
    for (const d of receiver.accepted().filter((x) => ids.includes(x.event.data.key_id as string))) perId.set(d.id, (perId.get(d.id) ?? 0) + 1);
    expect([...perId.values()].filter((n) => n > 1)).toEqual([]);
    figures.attemptsWhileDown = receiver.deliveries.filter((d) => ids.includes(d.event.data.key_id as string) && d.answered === 503).length;
    expect(receiver.unverified).toBe(0);
  }, budget(60_000));
});

describe('dead letters', () => {
  it('an event still refused after WEBHOOK_GIVE_UP_AFTER_MS (20 s here) is listed (admin API, CLI) and re-sent once', async () => {
    receiver.refuseKeys.add('wh-dead');
    await createKey('wh-dead');
    const dead = await eventually('a dead letter', async () => {
      const list = (await (await admin('GET', '/admin/webhooks/dead')).json()) as { events: Array<{ id: string; type: string; attempts: number; last_error: string; event: { data: { key_id: string } } }> };
      return list.events.find((e) => e.event.data.key_id === 'wh-dead');
    }, { timeoutMs: 60_000 });
    expect(dead).toMatchObject({ type: 'key.created', last_error: 'status 503' });
    expect(dead.attempts).toBeGreaterThan(3);
    const listed = await cli(['webhooks', 'dead']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(dead.id);
    receiver.refuseKeys.delete('wh-dead');
    const resent = await admin('POST', `/admin/webhooks/dead/${dead.id}/resend`);
    expect(resent.status).toBe(202);
    expect((await admin('POST', `/admin/webhooks/dead/${dead.id}/resend`)).status).toBe(404);
    const arrived = await eventually('the re-sent event', () => about('wh-dead')[0], DELIVERY);
    expect(arrived.id).toBe(dead.id);
    expect((await cli(['webhooks', 'resend', 'msg_none'])).stderr).toMatch(/^keys: no dead letter with id "msg_none"/);
  }, budget(90_000));
});

describe('tampering', () => {
  it('a delivered event with its body, id or timestamp changed is refused by the library', () => {
    const d = receiver.accepted()[0]!;
    const verifier = new Webhook(SECRET);
    expect(() => verifier.verify(d.body, d.headers)).not.toThrow();
    expect(() => verifier.verify(d.body.replace('"key_id":"', '"key_id":"x'), d.headers)).toThrow(WebhookVerificationError);
    expect(() => verifier.verify(d.body, { ...d.headers, 'webhook-id': `${d.id}x` })).toThrow(WebhookVerificationError);
    expect(() => verifier.verify(d.body, { ...d.headers, 'webhook-signature': d.headers['webhook-signature']!.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')) })).toThrow(WebhookVerificationError);
  });
});

/** Resident memory of a gateway process, MB (Linux /proc). */
const rssMb = (g: Proc): number => {
  const status = readFileSync(`/proc/${g.child.pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024);
};

/** p50/p99 (ms) of `n` requests, 10 at a time, to one instance. */
async function latencies(url: string, value: string, n: number): Promise<{ p50: number; p99: number }> {
  const ms: number[] = [];
  for (let i = 0; i < n; i += 10) {
    await Promise.all(Array.from({ length: 10 }, async () => {
      const t = process.hrtime.bigint();
      const a = await getWithKey(url, '/v1/ping', value);
      expect(a.status).toBe(200);
      ms.push(Number(process.hrtime.bigint() - t) / 1e6);
    }));
  }
  ms.sort((a, b) => a - b);
  return { p50: Math.round(ms[Math.floor(ms.length * 0.5)]! * 10) / 10, p99: Math.round(ms[Math.floor(ms.length * 0.99)]! * 10) / 10 };
}

describe('a receiver that never answers', () => {
  it('does not slow public requests (p99 reported beside a gateway without webhooks), and deliveries in flight and memory stay bounded', async () => {
    receiver.mode = 'hang';
    const plain = await stack.startGateway({});
    try {
      const value = await createKey('wh-hang-load');
      for (let i = 0; i < 40; i++) await createKey(`wh-hang-${i}`); // 40 events the receiver will never answer
      const rssBefore = gateways.map(rssMb);
      await eventually('deliveries hanging', () => receiver.open >= 3, DELIVERY);
      await latencies(gateways[1]!.url, value, 50); // warm both (key cache, connections)
      await latencies(plain.url, value, 50);
      const withWebhooks = await latencies(gateways[1]!.url, value, 400);
      const without = await latencies(plain.url, value, 400);
      figures.p99WithHangingReceiverMs = withWebhooks.p99;
      figures.p99WithoutWebhooksMs = without.p99;
      figures.p50 = { with: withWebhooks.p50, without: without.p50 };
      // Bounded: at most WEBHOOK_CONCURRENCY (4) connections per instance, 3 instances; twice that
      // allowed, as this process may see a timed-out connection's close after its replacement opened.
      figures.receiverConnectionsMax = receiver.maxOpen;
      expect(receiver.maxOpen).toBeLessThanOrEqual(24);
      // The events wait in Redis, not in the gateways: each of the 40 is in the stream (new, or
      // pending while an attempt hangs), the retry set, or (past the give-up) the dead letters.
      const read = (await redis.multi().xlen(webhookKeys.stream).zcard(webhookKeys.retry).hlen(webhookKeys.dead).exec())!; // one atomic read
      const [inStream, inRetry, dead] = read.map(([, n]) => Number(n)) as [number, number, number];
      figures.heldInRedisWhileHanging = { inStream, inRetry, dead };
      expect(inStream + inRetry + dead).toBeGreaterThanOrEqual(40);
      const growth = gateways.map((g, i) => rssMb(g) - rssBefore[i]!);
      figures.rssGrowthMbWhileHanging = growth;
      for (const mb of growth) expect(mb).toBeLessThan(60);
    } finally {
      await plain.stop();
      receiver.release();
      receiver.mode = 'ok';
    }
    // Those that waited past WEBHOOK_GIVE_UP_AFTER_MS (20 s here) are dead letters: re-sent, as an
    // operator would. Every one of the 40 then arrives.
    const hangIds = Array.from({ length: 40 }, (_, i) => `wh-hang-${i}`);
    await eventually('each delivered or dead', async () => {
      const dead = ((await (await admin('GET', '/admin/webhooks/dead')).json()) as { events: Array<{ id: string; event: { data: { key_id: string } } }> }).events;
      const hung = dead.filter((d) => hangIds.includes(d.event.data.key_id));
      for (const d of hung) expect((await admin('POST', `/admin/webhooks/dead/${d.id}/resend`)).status).toBe(202);
      figures.hungEventsDeadLettered = ((figures.hungEventsDeadLettered as number | undefined) ?? 0) + hung.length;
      return hangIds.every((id) => about(id).length >= 1);
    }, { timeoutMs: 60_000 });
    for (const id of hangIds) expect(about(id)).toHaveLength(1);
  }, budget(120_000));
});

describe('gateways killed with events pending', () => {
  it('a new instance delivers them', async () => {
    receiver.mode = 'down';
    const ids = Array.from({ length: 5 }, (_, i) => `wh-crash-${i}`);
    for (const id of ids) await createKey(id);
    await eventually('each refused once', () => ids.every((id) => receiver.deliveries.some((d) => d.event.data.key_id === id)), DELIVERY);
    await Promise.all(gateways.map((g) => g.stop('SIGKILL')));
    gateways = [];
    receiver.mode = 'ok';
    const restartedAt = Date.now();
    gateways = [await startOne()];
    // Events a killed instance was delivering are taken over after 2 × WEBHOOK_TIMEOUT_MS + 2 s.
    await eventually('all arrive after the restart', () => ids.every((id) => about(id).length >= 1), { timeoutMs: 45_000 });
    figures.afterRestartMs = Date.now() - restartedAt;
    for (const id of ids) expect(about(id)).toHaveLength(1);
  }, budget(90_000));
});
