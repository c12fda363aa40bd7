/**
 * Pause reasons as a set, on a real Redis through the key admin: pausing adds a reason and settling
 * removes one (or, unnamed, all but `leaked`); a key paused for a dispute and an unpaid renewal stays
 * paused until both are settled; a change that changes nothing writes nothing, audits nothing and
 * sends no event; `leaked` is never settled (409 `conflict`), only a roll clears it; a record written
 * with the single `pause_reason` reads as a set of one and is left as it is; export then import
 * carries every record over unchanged; account-level pause and settle act on every key of the
 * account under the caller's actor, channel and event fields.
 */
import fs from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { createRedisAccountStore } from '../../gateway/accounts/redis-account-store';
import { runAs } from '../../gateway/audit/actor';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin, type KeyAdmin } from '../../gateway/keys/key-admin';
import { redisKeys } from '../../gateway/keys/redis-layout';
import { makeTempDir, removeTempDirs, sha256Hex, writeGatewayConfig } from '../kit/gateway-stack';
import { runKeysCli } from '../kit/keys-cli';
import { startRedis, type RedisServer } from '../kit/redis-server';

jest.setTimeout(60_000);

let server: RedisServer;
let redis: Redis;
let admin: KeyAdmin;
let gatewayConfig: string;
const events: Array<{ type: string; data: Record<string, unknown> }> = [];

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.url);
  gatewayConfig = writeGatewayConfig();
  admin = createKeyAdmin(redis, loadGatewayConfig(gatewayConfig), undefined, undefined, async (type, data) => void events.push({ type, data }));
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
  removeTempDirs();
});

const auditLength = (): Promise<number> => redis.xlen(redisKeys.audit);
const stored = async (id: string): Promise<Record<string, unknown>> => JSON.parse((await redis.get(redisKeys.record(id)))!) as Record<string, unknown>;
const newKey = (id: string, account?: string) => admin.create({ id, tier: 'standard', countries: ['GB'], address: '10.0.0.1', ...(account ? { account } : {}) });

/** What a call wrote: audit entries, events, whether the record changed. */
async function effectOf(id: string, work: () => Promise<unknown>): Promise<{ audit: number; events: string[]; rewritten: boolean }> {
  const [audit, count, raw] = [await auditLength(), events.length, await redis.get(redisKeys.record(id))];
  await work();
  return { audit: (await auditLength()) - audit, events: events.slice(count).map((e) => e.type), rewritten: (await redis.get(redisKeys.record(id))) !== raw };
}

describe('a set of reasons', () => {
  it('a key paused for a dispute and an unpaid renewal stays paused until both are settled', async () => {
    await newKey('both');
    expect(await admin.pause('both', 'payment_dispute')).toMatchObject({ status: 'paused', pause_reasons: ['payment_dispute'], pause_reason: 'payment_dispute' });
    const paused = await admin.pause('both', 'unpaid_renewal');
    expect(paused).toMatchObject({ status: 'paused', pause_reasons: ['payment_dispute', 'unpaid_renewal'], pause_reason: 'payment_dispute' });
    expect(await stored('both')).toMatchObject({ status: 'paused', pause_reasons: ['payment_dispute', 'unpaid_renewal'] });
    expect(await stored('both')).not.toHaveProperty('pause_reason');

    const settledOne = await admin.settle('both', 'unpaid_renewal');
    expect(settledOne).toMatchObject({ status: 'paused', pause_reasons: ['payment_dispute'], pause_reason: 'payment_dispute' });
    const active = await admin.settle('both', 'payment_dispute');
    expect(active.status).toBe('active');
    expect(active).not.toHaveProperty('pause_reasons');
    expect(active).not.toHaveProperty('pause_reason');
    expect(await stored('both')).not.toHaveProperty('pause_reasons');

    const entries = (await admin.readAudit({ keyId: 'both', limit: 10 })).entries.reverse().map((e) => [e.action, e.changes]);
    expect(entries.slice(1)).toEqual([
      ['pause', { status: { before: 'active', after: 'paused' }, pause_reasons: { before: null, after: ['payment_dispute'] } }],
      ['pause', { pause_reasons: { before: ['payment_dispute'], after: ['payment_dispute', 'unpaid_renewal'] } }],
      ['settle', { pause_reasons: { before: ['payment_dispute', 'unpaid_renewal'], after: ['payment_dispute'] } }],
      ['settle', { status: { before: 'paused', after: 'active' }, pause_reasons: { before: ['payment_dispute'], after: null } }],
    ]);
  });

  it('the events carry pause_reasons and pause_reason, and what the call added or settled', async () => {
    await newKey('evented');
    const start = events.length;
    await admin.pause('evented', 'unpaid_renewal');
    await admin.pause('evented', 'payment_dispute');
    await admin.settle('evented', 'unpaid_renewal');
    await admin.settle('evented');
    expect(events.slice(start)).toEqual([
      { type: 'key.paused', data: { key_id: 'evented', status: 'paused', pause_reasons: ['unpaid_renewal'], pause_reason: 'unpaid_renewal', added: ['unpaid_renewal'] } },
      { type: 'key.paused', data: { key_id: 'evented', status: 'paused', pause_reasons: ['payment_dispute', 'unpaid_renewal'], pause_reason: 'payment_dispute', added: ['payment_dispute'] } },
      { type: 'key.settled', data: { key_id: 'evented', status: 'paused', pause_reasons: ['payment_dispute'], pause_reason: 'payment_dispute', settled: ['unpaid_renewal'] } },
      { type: 'key.settled', data: { key_id: 'evented', status: 'active', pause_reasons: [], settled: ['payment_dispute'] } },
    ]);
  });

  it('a pause names its reason (operator: no payment reason); a settle without a reason clears every reason but leaked', async () => {
    await newKey('overridden');
    await expect(admin.pause('overridden', undefined)).rejects.toMatchObject({ code: 'invalid_parameter', extras: { parameter: 'reason' } });
    expect(await admin.pause('overridden', 'operator')).toMatchObject({ pause_reasons: ['operator'] });
    await admin.pause('overridden', 'payment_dispute');
    await admin.pause('overridden', 'unpaid_renewal');
    expect((await admin.settle('overridden')).status).toBe('active');
  });

  it('adding a reason the key has, or settling one it has not, writes nothing, audits nothing, sends nothing', async () => {
    await newKey('idle');
    await admin.pause('idle', 'unpaid_renewal');
    expect(await effectOf('idle', () => admin.pause('idle', 'unpaid_renewal'))).toEqual({ audit: 0, events: [], rewritten: false });
    expect(await effectOf('idle', () => admin.settle('idle', 'payment_dispute'))).toEqual({ audit: 0, events: [], rewritten: false });
    await admin.settle('idle');
    expect(await effectOf('idle', () => admin.settle('idle'))).toEqual({ audit: 0, events: [], rewritten: false });
    expect(await effectOf('idle', () => admin.settle('idle', 'unpaid_renewal'))).toEqual({ audit: 0, events: [], rewritten: false });
    // The same pause ten times at once: one change.
    expect(await effectOf('idle', () => Promise.all(Array.from({ length: 10 }, () => admin.pause('idle', 'payment_dispute'))))).toEqual({ audit: 1, events: ['key.paused'], rewritten: true });
  });

  it('a bad reason is 400 naming the field; a revoked key is neither paused nor settled', async () => {
    await newKey('strict');
    await expect(admin.pause('strict', 'bankrupt')).rejects.toMatchObject({ code: 'invalid_parameter', extras: { parameter: 'reason' } });
    await expect(admin.settle('strict', 'bankrupt')).rejects.toMatchObject({ code: 'invalid_parameter', extras: { parameter: 'reason' } });
    await admin.pause('strict', 'payment_dispute');
    const revoked = await admin.revoke('strict');
    expect(revoked).not.toHaveProperty('pause_reasons');
    expect(await stored('strict')).not.toHaveProperty('pause_reasons');
    await expect(admin.pause('strict', 'operator')).rejects.toMatchObject({ code: 'invalid_parameter' });
    await expect(admin.settle('strict')).rejects.toMatchObject({ code: 'invalid_parameter' });
  });
});

describe('leaked: only a roll clears it', () => {
  it('a settle naming leaked, or one that would leave the key paused only because it leaked, is 409 and changes nothing', async () => {
    await newKey('leaky');
    await admin.pause('leaky', 'leaked');
    await admin.pause('leaky', 'unpaid_renewal');
    for (const reason of ['leaked', undefined]) {
      const effect = await effectOf('leaky', () => expect(admin.settle('leaky', reason)).rejects.toMatchObject({ code: 'conflict', status: 409, message: expect.stringContaining('roll') }));
      expect(effect).toEqual({ audit: 0, events: [], rewritten: false });
    }
    // A named payment reason is settled; the key stays paused because it leaked.
    expect(await admin.settle('leaky', 'unpaid_renewal')).toMatchObject({ status: 'paused', pause_reasons: ['leaked'] });
    await expect(admin.settle('leaky')).rejects.toMatchObject({ code: 'conflict' });
  });

  it('a roll clears leaked: a key paused only for it is active again, one with another reason stays paused', async () => {
    await newKey('rolled-leak');
    await admin.pause('rolled-leak', 'leaked');
    await admin.roll('rolled-leak', 0);
    expect(await admin.show('rolled-leak')).toMatchObject({ status: 'active' });
    expect(await stored('rolled-leak')).not.toHaveProperty('pause_reasons');

    await newKey('rolled-dispute');
    await admin.pause('rolled-dispute', 'leaked');
    await admin.pause('rolled-dispute', 'payment_dispute');
    await admin.roll('rolled-dispute', 0);
    expect(await admin.show('rolled-dispute')).toMatchObject({ status: 'paused', pause_reasons: ['payment_dispute'] });
    const roll = (await admin.readAudit({ keyId: 'rolled-dispute', limit: 1 })).entries[0]!;
    expect(roll.changes.pause_reasons).toEqual({ before: ['leaked', 'payment_dispute'], after: ['payment_dispute'] });
  });
});

describe('records written with the single pause_reason', () => {
  const legacy = (id: string, reason: string) => ({
    id, key_sha256: sha256Hex(`${id}-value`), tier: 'standard', countries: ['GB'], addresses: ['10.0.0.9'], status: 'paused', pause_reason: reason,
    created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-02T00:00:00.000Z',
  });
  const storeLegacy = async (id: string, reason: string) => {
    await redis.set(redisKeys.record(id), JSON.stringify(legacy(id, reason)));
    await redis.set(redisKeys.byHash(sha256Hex(`${id}-value`)), id);
    await redis.sadd(redisKeys.ids, id);
  };

  it('read as a set of one, left as they are by a change that changes nothing, rewritten in the set form by one that does', async () => {
    await storeLegacy('old-dispute', 'payment_dispute');
    expect(await admin.show('old-dispute')).toMatchObject({ status: 'paused', pause_reasons: ['payment_dispute'], pause_reason: 'payment_dispute' });
    expect(await effectOf('old-dispute', () => admin.pause('old-dispute', 'payment_dispute'))).toEqual({ audit: 0, events: [], rewritten: false });
    expect(await admin.pause('old-dispute', 'unpaid_renewal')).toMatchObject({ pause_reasons: ['payment_dispute', 'unpaid_renewal'] });
    const now = await stored('old-dispute');
    expect(now).toMatchObject({ pause_reasons: ['payment_dispute', 'unpaid_renewal'] });
    expect(now).not.toHaveProperty('pause_reason');
    const entry = (await admin.readAudit({ keyId: 'old-dispute', limit: 1 })).entries[0]!;
    expect(entry.changes).toEqual({ pause_reason: { before: 'payment_dispute', after: null }, pause_reasons: { before: null, after: ['payment_dispute', 'unpaid_renewal'] } });

    await storeLegacy('old-unpaid', 'unpaid_renewal');
    expect((await admin.settle('old-unpaid', 'unpaid_renewal')).status).toBe('active');
    expect(await stored('old-unpaid')).not.toHaveProperty('pause_reason');
  });

  it('an active record left with an old pause_reason holds no reason: pausing for it pauses the key', async () => {
    await redis.set(redisKeys.record('old-active'), JSON.stringify({ ...legacy('old-active', 'payment_dispute'), status: 'active' }));
    await redis.sadd(redisKeys.ids, 'old-active');
    expect(await admin.show('old-active')).not.toHaveProperty('pause_reasons');
    expect(await effectOf('old-active', () => admin.settle('old-active'))).toEqual({ audit: 0, events: [], rewritten: false });
    expect(await admin.pause('old-active', 'payment_dispute')).toMatchObject({ status: 'paused', pause_reasons: ['payment_dispute'] });
  });

  it('export then import carries every record over unchanged: the single reason, the set, the invoice link', async () => {
    await storeLegacy('old-export', 'unpaid_renewal');
    await newKey('set-export');
    await admin.pause('set-export', 'payment_dispute');
    await admin.pause('set-export', 'leaked');
    const withLink = { ...legacy('link-export', 'unpaid_renewal'), key_sha256: sha256Hex('link-export-value'), billing_invoice_url: 'https://invoice.stripe.com/i/acct_1/test_abc' };
    await redis.set(redisKeys.record('link-export'), JSON.stringify(withLink));
    await redis.set(redisKeys.byHash(withLink.key_sha256), 'link-export');
    await redis.sadd(redisKeys.ids, 'link-export');
    expect(await admin.show('link-export')).toMatchObject({ billing_invoice_url: withLink.billing_invoice_url, pause_reasons: ['unpaid_renewal'] });

    const file = path.join(makeTempDir(), 'export.yaml');
    const exported = await runKeysCli(server.url, ['export', file], { GATEWAY_CONFIG: gatewayConfig });
    expect(exported.code).toBe(0);
    const target = await startRedis();
    const targetRedis = new Redis(target.url);
    try {
      const imported = await runKeysCli(target.url, ['import', file], { GATEWAY_CONFIG: gatewayConfig });
      expect(imported.code).toBe(0);
      for (const id of ['old-export', 'set-export', 'link-export']) {
        const strip = (json: string | null) => {
          const { pending: _p, op: _o, ...record } = JSON.parse(json!) as Record<string, unknown>;
          return record;
        };
        expect(strip(await targetRedis.get(redisKeys.record(id)))).toEqual(strip(await redis.get(redisKeys.record(id))));
      }
      expect(fs.readFileSync(file, 'utf8')).toMatch(/pause_reasons: \[leaked, payment_dispute\]/);
    } finally {
      targetRedis.disconnect();
      await target.stop();
    }
  });
});

describe('account-level pause and settle', () => {
  beforeAll(async () => {
    const accounts = createRedisAccountStore(redis);
    await accounts.create({ id: 'acme', name: 'Acme', emails: ['billing@acme.example'] });
    await accounts.create({ id: 'empty', name: 'Empty', emails: ['nobody@empty.example'] });
    await newKey('acme-1', 'acme');
    await newKey('acme-2', 'acme');
    await newKey('acme-gone', 'acme');
    await admin.revoke('acme-gone');
    await newKey('not-acme');
  });
  const billing = (event: string) => ({ actor: { name: `billing:stripe:${event}`, channel: 'billing' as const }, eventFields: { source: 'billing' } });

  it('pauses every key of the account under the caller\'s actor, channel and event fields; once', async () => {
    const start = events.length;
    const audit = await auditLength();
    const answer = await admin.pauseAccount('acme', 'unpaid_renewal', billing('evt_1'));
    expect(answer).toEqual({
      account: 'acme',
      keys: [
        { id: 'acme-1', status: 'paused', pause_reasons: ['unpaid_renewal'], changed: true, added: ['unpaid_renewal'] },
        { id: 'acme-2', status: 'paused', pause_reasons: ['unpaid_renewal'], changed: true, added: ['unpaid_renewal'] },
        { id: 'acme-gone', status: 'revoked', pause_reasons: [], changed: false, skipped: 'revoked' },
      ],
    });
    expect(await auditLength()).toBe(audit + 2);
    const entry = (await admin.readAudit({ keyId: 'acme-1', limit: 1 })).entries[0]!;
    expect([entry.actor, entry.channel, entry.action]).toEqual(['billing:stripe:evt_1', 'billing', 'pause']);
    expect(events.slice(start).map((e) => [e.type, e.data.key_id, e.data.source, e.data.pause_reasons])).toEqual([
      ['key.paused', 'acme-1', 'billing', ['unpaid_renewal']],
      ['key.paused', 'acme-2', 'billing', ['unpaid_renewal']],
    ]);
    expect((await admin.show('not-acme')).status).toBe('active');

    // The same call again: nothing changes.
    const again = await admin.pauseAccount('acme', 'unpaid_renewal', billing('evt_1'));
    expect(again.keys.map((k) => k.changed)).toEqual([false, false, false]);
    expect(await auditLength()).toBe(audit + 2);
    expect(events.length).toBe(start + 2);
  });

  it('settles one reason or all but leaked; naming leaked is 409; the channel\'s actor when the caller names none', async () => {
    await admin.pauseAccount('acme', 'payment_dispute');
    await admin.pause('acme-2', 'leaked');
    const one = await runAs({ name: 'otto', channel: 'admin_api' }, () => admin.settleAccount('acme', 'unpaid_renewal'));
    expect(one.keys.slice(0, 2)).toEqual([
      { id: 'acme-1', status: 'paused', pause_reasons: ['payment_dispute'], changed: true, settled: ['unpaid_renewal'] },
      { id: 'acme-2', status: 'paused', pause_reasons: ['leaked', 'payment_dispute'], changed: true, settled: ['unpaid_renewal'] },
    ]);
    expect((await admin.readAudit({ keyId: 'acme-1', limit: 1 })).entries[0]).toMatchObject({ actor: 'otto', channel: 'admin_api', action: 'settle' });
    await expect(admin.settleAccount('acme', 'leaked')).rejects.toMatchObject({ code: 'conflict' });
    const all = await admin.settleAccount('acme');
    expect(all.keys.slice(0, 2)).toEqual([
      { id: 'acme-1', status: 'active', pause_reasons: [], changed: true, settled: ['payment_dispute'] },
      { id: 'acme-2', status: 'paused', pause_reasons: ['leaked'], changed: true, settled: ['payment_dispute'] },
    ]);
  });

  it('an unpaid renewal notes the open invoice\'s link: a new link alone is audited without an event; it goes with the reason', async () => {
    const first = 'https://invoice.stripe.com/i/acct_1/test_first';
    const second = 'https://invoice.stripe.com/i/acct_1/test_second';
    await admin.pauseAccount('acme', 'unpaid_renewal', billing('evt_2'), { billing_invoice_url: first });
    expect(await admin.show('acme-1')).toMatchObject({ pause_reasons: ['unpaid_renewal'], billing_invoice_url: first });
    expect(await effectOf('acme-1', () => admin.pause('acme-1', 'unpaid_renewal', undefined, { billing_invoice_url: first }))).toEqual({ audit: 0, events: [], rewritten: false });
    expect(await effectOf('acme-1', () => admin.pause('acme-1', 'unpaid_renewal', undefined, { billing_invoice_url: second }))).toEqual({ audit: 1, events: [], rewritten: true });
    expect((await admin.readAudit({ keyId: 'acme-1', limit: 1 })).entries[0]!.changes).toEqual({ billing_invoice_url: { before: first, after: second } });
    await admin.pause('acme-1', 'payment_dispute');
    expect(await admin.show('acme-1')).toHaveProperty('billing_invoice_url', second);
    await admin.settle('acme-1', 'unpaid_renewal');
    expect(await admin.show('acme-1')).not.toHaveProperty('billing_invoice_url');
    await admin.settleAccount('acme');
    await expect(admin.pause('acme-1', 'operator', undefined, { billing_invoice_url: first })).rejects.toMatchObject({ code: 'invalid_parameter', extras: { parameter: 'billing_invoice_url' } });
    await expect(admin.pause('acme-1', 'unpaid_renewal', undefined, { billing_invoice_url: 'javascript:alert(1)' })).rejects.toMatchObject({ code: 'invalid_parameter', extras: { parameter: 'billing_invoice_url' } });
    expect((await admin.show('acme-1')).status).toBe('active');
  });

  it('an unknown account is 404; an account without keys answers an empty list', async () => {
    await expect(admin.pauseAccount('nobody', 'unpaid_renewal')).rejects.toMatchObject({ code: 'not_found', status: 404 });
    await expect(admin.settleAccount('nobody')).rejects.toMatchObject({ code: 'not_found' });
    expect(await admin.settleAccount('empty')).toEqual({ account: 'empty', keys: [] });
    await expect(admin.pauseAccount('acme', 'bankrupt')).rejects.toMatchObject({ code: 'invalid_parameter' });
  });
});
