/**
 * The one email comparison rule (gateway/accounts/email-address.ts) and the memory twins' atomic
 * holder checks: an address reaches an account only when it differs from one the account lists in
 * the case of ASCII letters; the memory request store's cap and same-request check hold for
 * creations made at once.
 */
import { emailKey, sameEmail } from '../../gateway/accounts/email-address';
import { normaliseEmails } from '../../gateway/accounts/account';
import { createMemoryAccountStore } from '../../gateway/accounts/memory-account-store';
import { createMemoryRequestStore } from '../../gateway/requests/memory-request-store';
import { ISO_COUNTRY_CODES } from '../../gateway/validation/iso-countries';

describe('email comparison', () => {
  test('ASCII letters fold; every other character is kept as it is', () => {
    expect(emailKey('Kate@ACME.Example')).toBe('kate@acme.example');
    for (const odd of ['\u212Aate@acme.example', '\u212Bsa@acme.example', 'KAT\u0130@acme.example', 'kate@acme.example\u00a0', ' kate@acme.example', 'jose\u0301@acme.example', 'ＫATE@acme.example']) {
      expect(emailKey(odd)).toBe(odd.replace(/[A-Z]/g, (c) => c.toLowerCase()));
      expect(sameEmail(odd, 'kate@acme.example')).toBe(false);
    }
    expect(sameEmail('\u00c5sa@acme.example', '\u00e5sa@acme.example')).toBe(false); // Å and å: not ASCII, not folded
    expect(normaliseEmails(['Kate@Acme.Example', 'kate@acme.example', '\u212Aate@acme.example'])).toEqual(['kate@acme.example', '\u212Aate@acme.example']);
  });

  test('no two different addresses a provider can verify reach one account unless they differ in ASCII case only', async () => {
    const store = createMemoryAccountStore();
    await store.create({ id: 'acme', name: 'Acme', emails: ['kate@acme.example'] });
    expect((await store.findByEmail('KATE@acme.EXAMPLE'))?.id).toBe('acme');
    for (const other of ['\u212Aate@acme.example', 'kate@acme.example ', 'kate@acme.example\u00a0', '\u212AATE@ACME.EXAMPLE']) {
      expect(await store.findByEmail(other)).toBeUndefined();
    }
    // The Kelvin-sign address is an identity of its own: another account may hold it.
    await store.create({ id: 'kelvin', name: 'Kelvin', emails: ['\u212Aate@acme.example'] });
    expect((await store.findByEmail('\u212Aate@acme.example'))?.id).toBe('kelvin');
    expect((await store.findByEmail('kate@acme.example'))?.id).toBe('acme');
  });
});

describe('the memory request store under creations made at once', () => {
  const countries = [...ISO_COUNTRY_CODES].sort().slice(0, 90);
  const store = () => createMemoryRequestStore({ apply: async () => undefined });

  test('90 different requests of one key: 50 pending, 40 refused (conflict)', async () => {
    const s = store();
    const outcomes = await Promise.allSettled(countries.map((c) => s.create({ keyId: 'k', accountId: 'a', change: { countries: [c] } })));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(50);
    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason.code)).toEqual(Array(40).fill('conflict'));
    expect((await s.list({ keyId: 'k', status: 'pending', limit: 1000 })).requests).toHaveLength(50);
    // Another key has its own 50.
    await expect(s.create({ keyId: 'k2', accountId: 'a', change: { tier: 'advanced' } })).resolves.toMatchObject({ status: 'pending' });
  });

  test('10 identical requests: one recorded, each answered with it; once decided, the same may be asked again', async () => {
    const s = store();
    const same = await Promise.all(Array.from({ length: 10 }, () => s.create({ keyId: 'k', accountId: 'a', change: { countries: ['FR', 'DE'] } })));
    expect(new Set(same.map((r) => r.id)).size).toBe(1);
    // The same countries in another order are the same request.
    expect((await s.create({ keyId: 'k', accountId: 'a', change: { countries: ['de', 'fr'] } })).id).toBe(same[0]!.id);
    expect((await s.list({ keyId: 'k', limit: 1000 })).requests).toHaveLength(1);
    await s.decide(same[0]!.id, 'declined', 'op');
    expect((await s.create({ keyId: 'k', accountId: 'a', change: { countries: ['FR', 'DE'] } })).id).not.toBe(same[0]!.id);
  });
});
