/**
 * The pure and in-memory parts of holder accounts and subscription requests: the keys file's
 * `accounts:` list (one-line errors naming file, entry, field), its read-only store (reloaded when
 * the file changes), the memory twins (audit, conflicts, paging), one-time link tokens.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runAs } from '../../gateway/audit/actor';
import { createMemoryAuditLog } from '../../gateway/audit/memory-audit-log';
import { memoryChangeAudit } from '../../gateway/accounts/change-audit';
import { createFileAccountStore } from '../../gateway/accounts/file-account-store';
import { readKeysFileAccounts } from '../../gateway/accounts/keys-file-accounts';
import { createMemoryAccountStore } from '../../gateway/accounts/memory-account-store';
import { createMemoryLinkTokens } from '../../gateway/accounts/link-tokens';
import { isWellFormedKeyEntry, readKeysFile } from '../../gateway/keys/keys-file';
import { createMemoryRequestStore } from '../../gateway/requests/memory-request-store';
import type { RequestChange } from '../../gateway/requests/subscription-request';

const HASH = 'a'.repeat(64);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'accounts-unit-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (text: string): string => {
  const f = path.join(dir, `keys-${n++}.yaml`);
  fs.writeFileSync(f, text);
  return f;
};
const KEY = (id: string, extra = ''): string => `  - id: ${id}\n    key_sha256: ${id === 'k1' ? HASH : 'b'.repeat(64)}\n    tier: standard\n    countries: [GB]\n    address: 127.0.0.1\n    status: active\n${extra}`;
const ACCOUNTS = 'accounts:\n  - id: acme\n    name: Acme\n    emails: [Ops@Acme.example]\n    billing_customer: cus_1\n  - id: other\n    name: Other\n    emails: [x@other.example]\n';

describe('the keys file accounts: list', () => {
  test('read with the keys; emails lower-cased; which key names which account', () => {
    const f = file(`${ACCOUNTS}keys:\n${KEY('k1', '    account: acme\n')}${KEY('k2')}`);
    expect(readKeysFile(f).map((e) => e.account)).toEqual(['acme', undefined]);
    const { accounts, keyAccounts } = readKeysFileAccounts(f);
    expect(accounts.map((a) => [a.id, a.emails, a.billingCustomer])).toEqual([['acme', ['ops@acme.example'], 'cus_1'], ['other', ['x@other.example'], undefined]]);
    expect([...keyAccounts]).toEqual([['k1', 'acme']]);
  });

  test.each([
    ['a bad email', 'accounts:\n  - id: acme\n    name: Acme\n    emails: [nope]\nkeys: []\n', 'accounts[0] (id acme): field "emails[0]": must be an email address'],
    ['eleven emails', `accounts:\n  - id: acme\n    name: Acme\n    emails: [${Array.from({ length: 11 }, (_, i) => `u${i}@x.example`).join(', ')}]\nkeys: []\n`, 'accounts[0] (id acme): field "emails": must list at most 10'],
    ['an unknown field', 'accounts:\n  - id: acme\n    name: Acme\n    emails: [a@x.example]\n    colour: red\nkeys: []\n', 'accounts[0] (id acme): Unrecognized key'],
    ['a duplicate id', 'accounts:\n  - id: acme\n    name: A\n    emails: [a@x.example]\n  - id: acme\n    name: B\n    emails: [b@x.example]\nkeys: []\n', 'accounts[1] (id acme): field "id": duplicate id'],
    ['an email two accounts list', 'accounts:\n  - id: a\n    name: A\n    emails: [same@x.example]\n  - id: b\n    name: B\n    emails: [SAME@x.example]\nkeys: []\n', 'accounts[1] (id b): field "emails[0]": same@x.example is already account a\'s'],
    ['a key naming no account of the list', `${ACCOUNTS}keys:\n${KEY('k1', '    account: ghost\n')}`, 'keys[0] (id k1): field "account": no account "ghost"'],
    ['a bad account id on a key', `keys:\n${KEY('k1', '    account: "bad id"\n')}`, 'keys[0] (id k1): field "account": must be an account id'],
  ])('%s: one line naming file, entry and field', (_what, text, message) => {
    const f = file(text);
    const read = (): unknown => {
      readKeysFile(f);
      return readKeysFileAccounts(f);
    };
    expect(read).toThrow(message);
    try {
      read();
    } catch (err) {
      expect((err as Error).message.startsWith(`${f}: `)).toBe(true);
      expect((err as Error).message).not.toContain('\n');
    }
  });

  test('the fast shape check agrees with the schema on `account`', () => {
    const entry = { id: 'k', key_sha256: HASH, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' };
    expect(isWellFormedKeyEntry({ ...entry, account: 'acme' })).toBe(true);
    expect(isWellFormedKeyEntry({ ...entry, account: 'bad id' })).toBe(false);
    expect(isWellFormedKeyEntry({ ...entry, account: 7 })).toBe(false);
  });
});

describe('the keys-file account store', () => {
  test('read-only, case-insensitive emails, key ids; reloaded when the file changes; a broken file keeps the last', async () => {
    const f = file(`${ACCOUNTS}keys:\n${KEY('k1', '    account: acme\n')}`);
    const store = createFileAccountStore(f);
    expect(store.writable).toBe(false);
    expect((await store.findByEmail('OPS@acme.EXAMPLE'))?.id).toBe('acme');
    expect(await store.keyIdsOf('acme')).toEqual(['k1']);
    expect(await store.accountOfKey('k1')).toBe('acme');
    await expect(store.create({ id: 'new', name: 'N', emails: ['n@x.example'] })).rejects.toMatchObject({ code: 'invalid_parameter' });
    await expect(store.update('acme', { name: 'X' })).rejects.toMatchObject({ code: 'invalid_parameter' });
    await expect(store.delete('other')).rejects.toMatchObject({ code: 'invalid_parameter' });
    fs.writeFileSync(f, `accounts:\n  - id: acme\n    name: Acme Renamed\n    emails: [new@acme.example]\nkeys:\n${KEY('k1')}`);
    fs.utimesSync(f, new Date(), new Date(Date.now() + 5000));
    expect((await store.get('acme'))?.name).toBe('Acme Renamed');
    expect(await store.get('other')).toBeUndefined();
    expect(await store.keyIdsOf('acme')).toEqual([]);
    fs.writeFileSync(f, 'accounts: [{id: broken}]\nkeys: []\n');
    fs.utimesSync(f, new Date(), new Date(Date.now() + 10_000));
    expect((await store.get('acme'))?.name).toBe('Acme Renamed');
  });
});

describe('the memory account store', () => {
  test('create, update, delete audited under the actor; conflicts; delete refused while a key names it; paging', async () => {
    const log = createMemoryAuditLog();
    const named = new Map<string, string[]>([['busy', ['key-1']]]);
    const store = createMemoryAccountStore({ audit: memoryChangeAudit(log), keyIdsOf: (id) => named.get(id) ?? [] });
    await runAs({ name: 'ada', channel: 'admin_api' }, async () => {
      await store.create({ id: 'busy', name: 'Busy', emails: ['A@B.example'] });
      await store.create({ id: 'idle', name: 'Idle', emails: ['c@d.example'], billingCustomer: 'c-1' });
      await expect(store.create({ id: 'dup', name: 'Dup', emails: ['a@b.EXAMPLE'] })).rejects.toMatchObject({ code: 'conflict' });
      await expect(store.create({ id: 'busy', name: 'Again', emails: ['z@z.example'] })).rejects.toMatchObject({ code: 'conflict' });
      await expect(store.create({ id: 'bad', name: 'Bad', emails: [] })).rejects.toMatchObject({ code: 'invalid_parameter', extras: { parameter: 'emails' } });
      const updated = await store.update('idle', { billingCustomer: null, emails: ['E@F.example'] });
      expect(updated.billingCustomer).toBeUndefined();
      expect((await store.findByEmail('c@d.example'))).toBeUndefined();
      expect((await store.findByEmail('e@f.example'))?.id).toBe('idle');
      await expect(store.delete('busy')).rejects.toMatchObject({ code: 'conflict' });
      await store.delete('idle');
    });
    const { entries } = await log.read({ limit: 10 });
    expect(entries.map((e) => [e.action, e.actor, e.account_id])).toEqual([
      ['account.delete', 'ada', 'idle'], ['account.update', 'ada', 'idle'], ['account.create', 'ada', 'idle'], ['account.create', 'ada', 'busy'],
    ]);
    for (const id of ['p1', 'p2', 'p3']) await store.create({ id, name: id, emails: [`${id}@x.example`] });
    const first = await store.list({ limit: 2 });
    expect(first.accounts.map((a) => a.id)).toEqual(['busy', 'p1']);
    const second = await store.list({ limit: 2, cursor: first.nextCursor! });
    expect(second.accounts.map((a) => a.id)).toEqual(['p2', 'p3']);
    expect(second.nextCursor).toBeNull();
    await expect(store.list({ limit: 0 })).rejects.toMatchObject({ extras: { parameter: 'limit' } });
    await expect(store.list({ limit: 5, cursor: 'forged' })).rejects.toMatchObject({ extras: { parameter: 'cursor' } });
  });
});

describe('the memory request store', () => {
  test('pending, decided once; approval applies the change; a failed apply leaves it pending; events', async () => {
    const applied: Array<[string, RequestChange]> = [];
    let failNext = false;
    const sent: Array<[string, Record<string, unknown>]> = [];
    const store = createMemoryRequestStore({
      apply: async (keyId, change, accountId) => {
        if (failNext) throw new Error('key gone');
        expect(accountId).toBe('a');
        applied.push([keyId, change]);
      },
      events: async (type, data) => void sent.push([type, data]),
    });
    const r = await store.create({ keyId: 'k', accountId: 'a', change: { countries: ['fr', 'FR', 'de'] } });
    expect(r.change).toEqual({ countries: ['FR', 'DE'] });
    await expect(store.create({ keyId: 'k', accountId: 'a', change: { countries: ['XX'] } })).rejects.toMatchObject({ extras: { parameter: 'countries' } });
    await expect(store.create({ keyId: 'k', accountId: 'a', change: { tier: 'gold' } })).rejects.toMatchObject({ extras: { parameter: 'tier' } });
    const approved = await store.decide(r.id, 'approved', 'otto');
    expect(approved).toMatchObject({ status: 'approved', decidedBy: 'otto' });
    expect(applied).toEqual([['k', { countries: ['FR', 'DE'] }]]);
    await expect(store.decide(r.id, 'declined', 'otto')).rejects.toMatchObject({ code: 'conflict' });
    const t = await store.create({ keyId: 'k', accountId: 'a', change: { tier: 'advanced' } });
    failNext = true;
    await expect(store.decide(t.id, 'approved', 'otto')).rejects.toThrow('key gone');
    expect((await store.get(t.id))?.status).toBe('pending');
    expect((await store.list({ limit: 10, status: 'pending' })).requests.map((x) => x.id)).toEqual([t.id]);
    expect(sent.map(([type]) => type)).toEqual(['subscription.requested', 'subscription.approved', 'subscription.requested']);
    expect(sent[1]![1]).toEqual({ request_id: r.id, key_id: 'k', account_id: 'a', change: { countries: ['FR', 'DE'] } });
  });
});

describe('one-time link tokens (memory twin)', () => {
  test('redeemed once; expired after its minutes; minutes bounded 1..60', async () => {
    let now = 1_000_000;
    const tokens = createMemoryLinkTokens(() => now);
    const token = await tokens.issue('acme');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await tokens.redeem(token)).toBe('acme');
    expect(await tokens.redeem(token)).toBeUndefined();
    const short = await tokens.issue('acme', 1);
    now += 61_000;
    expect(await tokens.redeem(short)).toBeUndefined();
    await expect(tokens.issue('acme', 61)).rejects.toMatchObject({ extras: { parameter: 'minutes' } });
    await expect(tokens.issue('acme', 0)).rejects.toMatchObject({ extras: { parameter: 'minutes' } });
    expect(await tokens.redeem('not a token')).toBeUndefined();
  });
});
