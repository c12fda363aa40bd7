/**
 * Webhooks without processes: signing (verified, and tampering refused, by the standardwebhooks
 * library), the retry schedule, the quota watcher (exactly the crossings, once each), the in-memory
 * queue (retries, dead letters, re-send, bounds) and the start-up checks of WEBHOOK_URL / WEBHOOK_SECRET.
 */
import { randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { parseEnv } from '../../gateway/config/env';
import { ConfigError } from '../../gateway/config/config-error';
import { decide } from '../../gateway/limits/decide';
import { windowsAt } from '../../gateway/limits/windows';
import { retryDelayMs } from '../../gateway/webhooks/backoff';
import { createMemoryWebhookQueue } from '../../gateway/webhooks/memory-webhook-queue';
import { createQuotaWatcher } from '../../gateway/webhooks/quota-thresholds';
import { createSigner } from '../../gateway/webhooks/signer';
import { newEvent, type WebhookEvent } from '../../gateway/webhooks/webhook-event';
import { afterFailure } from '../../gateway/webhooks/webhook-queue';
import { eventually } from '../kit/timing';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
describe('signing', () => {
  it('is verified by the standardwebhooks library, and any tampering is refused', () => {
    const event = newEvent('quota.threshold', { key_id: 'acme', window: 'day', threshold: 80, used: 80, limit: 100, resets_at: '2026-11-25T00:00:00.000Z' });
    const signed = createSigner(secret)(event);
    const receiver = new Webhook(secret);
    expect(receiver.verify(signed.body, signed.headers)).toEqual({ type: 'quota.threshold', timestamp: event.timestamp, data: event.data });
    expect(signed.headers['webhook-id']).toBe(event.id);
    expect(signed.headers['webhook-signature']).toMatch(/^v1,/);
    expect(() => receiver.verify(signed.body.replace('"used":80', '"used":79'), signed.headers)).toThrow(WebhookVerificationError);
    expect(() => receiver.verify(signed.body, { ...signed.headers, 'webhook-id': 'msg_other' })).toThrow(WebhookVerificationError);
    expect(() => receiver.verify(signed.body, { ...signed.headers, 'webhook-timestamp': String(Number(signed.headers['webhook-timestamp']) + 1) })).toThrow(WebhookVerificationError);
    expect(() => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(signed.body, signed.headers)).toThrow(WebhookVerificationError);
  });
});

describe('retry schedule', () => {
  it('doubles from the base, is capped, jitters between half and all of it, and gives up after the limit', () => {
    expect(retryDelayMs(1, 1000, 60_000, () => 0)).toBe(500);
    expect(retryDelayMs(1, 1000, 60_000, () => 1)).toBe(1000);
    expect(retryDelayMs(4, 1000, 60_000, () => 1)).toBe(8000);
    expect(retryDelayMs(40, 1000, 60_000, () => 1)).toBe(60_000);
    const o = { retryBaseMs: 1000, retryMaxMs: 3_600_000, giveUpAfterMs: 86_400_000, concurrency: 1, pollMs: 10 };
    expect(afterFailure(3, 0, 86_399_999, o)).toHaveProperty('retryAt');
    expect(afterFailure(3, 0, 86_400_000, o)).toEqual({ giveUp: true });
    // With the defaults (5 s base, 1 h cap) the attempts keep going for the whole 24 h.
    let t = 0;
    let attempts = 0;
    for (let a = 1; ; a++) {
      const next = afterFailure(a, 0, t, { ...o, retryBaseMs: 5000 });
      if ('giveUp' in next) break;
      t = next.retryAt;
      attempts++;
    }
    expect(t).toBeGreaterThanOrEqual(86_400_000);
    expect(attempts).toBeGreaterThan(20);
  });
});

describe('quota watcher', () => {
  it('queues exactly the crossings of 80, 90 and 100 % of the daily and monthly quota, once each', async () => {
    const queued: Array<{ onceKey: string; event: WebhookEvent }> = [];
    const used = new Set<string>();
    const watcher = createQuotaWatcher([80, 90, 100], async (onceKey, _until, event) => {
      if (used.has(onceKey)) return false;
      used.add(onceKey);
      queued.push({ onceKey, event });
      return true;
    }, () => undefined);
    const limits = { perMinute: 1000, perDay: 10, perMonth: 25 };
    const now = Date.now();
    const w = windowsAt(now);
    for (let n = 0; n < 10; n++) watcher.observe('k', decide({ minute: n, day: n, month: n }, limits, now, true, w));
    // A count seen again (given back, or counted per instance during an outage) does not send twice.
    watcher.observe('k', decide({ minute: 7, day: 7, month: 7 }, limits, now, true, w));
    // A count this instance kept alone while Redis stalled is not the key's use.
    watcher.observe('k2', { ...decide({ minute: 7, day: 7, month: 7 }, limits, now, true, w), store: 'local' } as ReturnType<typeof decide>);
    // A refusal is no crossing.
    watcher.observe('k', decide({ minute: 0, day: 10, month: 10 }, limits, now, false, w));
    await new Promise((r) => setImmediate(r));
    const data = queued.map((q) => q.event.data);
    expect(data.map((d) => `${d.window}:${d.threshold}:${d.used}/${d.limit}`)).toEqual(['day:80:8/10', 'day:90:9/10', 'day:100:10/10']);
    expect(data[0]).toEqual({ key_id: 'k', window: 'day', threshold: 80, used: 8, limit: 10, resets_at: new Date(w.day.reset).toISOString() });
    for (let n = 10; n < 25; n++) watcher.observe('k', decide({ minute: 0, day: 0, month: n }, limits, now, true, w));
    await new Promise((r) => setImmediate(r));
    expect(queued.slice(3).map((q) => `${q.event.data.window}:${q.event.data.used}`)).toEqual(['month:20', 'month:23', 'month:25']);
    expect(queued.every((q) => q.event.type === 'quota.threshold')).toBe(true);
  });
});

describe('in-memory queue (the embedded mode)', () => {
  const options = { retryBaseMs: 20, retryMaxMs: 50, giveUpAfterMs: 300, concurrency: 2, pollMs: 10 };

  it('retries a failing delivery until it works, and keeps one that gives up in the dead letters until re-sent', async () => {
    const queue = createMemoryWebhookQueue(options);
    const attempts = new Map<string, number>();
    const delivered: string[] = [];
    let refuse = new Set<string>();
    queue.startDelivery(async (event) => {
      attempts.set(event.id, (attempts.get(event.id) ?? 0) + 1);
      if (refuse.has(event.data.key_id as string) || (event.data.key_id === 'flaky' && attempts.get(event.id)! < 3)) return { ok: false, error: 'status 503' };
      delivered.push(event.id);
      return { ok: true };
    });
    const flaky = newEvent('key.created', { key_id: 'flaky' });
    const doomed = newEvent('key.paused', { key_id: 'doomed', pause_reason: 'unpaid_renewal' });
    refuse = new Set(['doomed']);
    await queue.enqueue(flaky);
    await queue.enqueue(doomed);
    await eventually('the flaky event delivered', () => delivered.includes(flaky.id), { timeoutMs: 5000, intervalMs: 10 });
    expect(attempts.get(flaky.id)).toBe(3);
    let dead: Awaited<ReturnType<typeof queue.deadLetterPage>>['events'] = [];
    await eventually('one dead letter', () => {
      void queue.deadLetterPage({}).then((d) => (dead = d.events));
      return dead.length === 1;
    }, { timeoutMs: 5000, intervalMs: 10 });
    expect(dead[0]).toMatchObject({ id: doomed.id, type: 'key.paused', last_error: 'status 503', event: { type: 'key.paused', data: { key_id: 'doomed' } } });
    expect(dead[0]!.attempts).toBeGreaterThan(1);
    refuse = new Set();
    expect(await queue.resend(doomed.id)).toBe(true);
    expect(await queue.resend(doomed.id)).toBe(false);
    await eventually('the re-sent event delivered', () => delivered.includes(doomed.id), { timeoutMs: 5000, intervalMs: 10 });
    expect(await queue.deadLetterPage({})).toEqual({ events: [], next_cursor: null });
    await queue.close();
  });

  it('queues a threshold once per marker, and holds at most its bound of events', async () => {
    const queue = createMemoryWebhookQueue(options);
    const e = newEvent('quota.threshold', { key_id: 'k' });
    expect(await queue.enqueueOnce('k:day:0:80', Date.now() + 60_000, e)).toBe(true);
    expect(await queue.enqueueOnce('k:day:0:80', Date.now() + 60_000, newEvent('quota.threshold', { key_id: 'k' }))).toBe(false);
    // Never delivering (no receiver started): the queue stays bounded.
    for (let i = 0; i < 10_050; i++) await queue.enqueue(newEvent('key.changed', { key_id: `k${i}` }));
    let inFlight = 0;
    let maxInFlight = 0;
    let delivered = 0;
    queue.startDelivery(async () => {
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      await new Promise((r) => setImmediate(r));
      inFlight--;
      delivered++;
      return { ok: true };
    });
    await eventually('every event delivered', () => delivered === 10_000, { timeoutMs: 20_000, intervalMs: 10 });
    expect(maxInFlight).toBeLessThanOrEqual(options.concurrency);
    await queue.close();
  });
});

describe('start-up checks', () => {
  const base = { PORT: '0' };
  const fail = (env: Record<string, string>): string => {
    try {
      parseEnv({ ...base, ...env });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('accepted');
  };
  it('refuses a bad secret in one line that never shows it, and a URL or secret alone', () => {
    const bad = 'whsec_not*base64*at*all*but*secret-ish';
    const message = fail({ WEBHOOK_URL: 'https://billing.example/hooks', WEBHOOK_SECRET: bad });
    expect(message).toMatch(/^environment variable WEBHOOK_SECRET: must be "whsec_"/);
    expect(message).not.toContain('not*base64');
    expect(message).not.toContain('\n');
    const short = `whsec_${randomBytes(8).toString('base64')}`;
    expect(fail({ WEBHOOK_URL: 'https://billing.example/hooks', WEBHOOK_SECRET: short })).not.toContain(short.slice(6));
    expect(fail({ WEBHOOK_URL: 'https://billing.example/hooks' })).toMatch(/^environment variable WEBHOOK_SECRET: needed with WEBHOOK_URL/);
    expect(fail({ WEBHOOK_SECRET: secret })).toMatch(/^environment variable WEBHOOK_URL: needed with WEBHOOK_SECRET/);
    expect(fail({ WEBHOOK_URL: 'ftp://x.example/', WEBHOOK_SECRET: secret })).toMatch(/^environment variable WEBHOOK_URL:/);
    expect(parseEnv({ ...base, WEBHOOK_URL: 'https://billing.example/hooks', WEBHOOK_SECRET: secret }).WEBHOOK_SECRET).toBe(secret);
  });
});
