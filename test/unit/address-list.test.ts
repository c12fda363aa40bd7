import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { addressMatcher, ANY_ADDRESS, MAX_ADDRESSES, normaliseAddressEntry } from '../../gateway/keys/address-list';
import { checkKeyEntry } from '../../gateway/keys/keys-file';

const normalised = (value: string): string => {
  const r = normaliseAddressEntry(value);
  if (!r.ok) throw new Error(r.message);
  return r.value;
};

describe('address list entries', () => {
  it.each([
    ['10.0.0.7', '10.0.0.7'],
    ['10.0.0.0/24', '10.0.0.0/24'],
    ['10.0.0.7/24', '10.0.0.0/24'],
    ['10.0.0.7/32', '10.0.0.7'],
    ['::ffff:10.0.0.1', '10.0.0.1'],
    ['::ffff:10.0.0.0/104', '10.0.0.0/8'],
    ['::ffff:a00:1/128', '10.0.0.1'],
    ['2001:DB8:0:0::1', '2001:db8::1'],
    ['2001:db8::1/32', '2001:db8::/32'],
    ['2001:db8::1/128', '2001:db8::1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['any', 'any'],
  ])('%s is kept as %s', (given, kept) => expect(normalised(given)).toBe(kept));

  it.each([
    ['0.0.0.0/0', /allows every address; if that is meant, write "any"/],
    ['::/0', /allows every address; if that is meant, write "any"/],
    ['::ffff:0.0.0.0/96', /allows every address/],
    ['10.0.0.0/33', /at most 32/],
    ['2001:db8::/129', /at most 128/],
    ['::ffff:10.0.0.0/95', /at least 96/],
    ['10.0.0/24', /not an IPv4 or IPv6 address or CIDR range/],
    ['127.1', /not an IPv4 or IPv6 address or CIDR range/],
    ['10.0.0.0/', /not an IPv4 or IPv6 address or CIDR range/],
    ['10.0.0.0/-1', /not an IPv4 or IPv6 address or CIDR range/],
    ['host.example', /not an IPv4 or IPv6 address or CIDR range/],
    ['ANY', /not an IPv4 or IPv6 address or CIDR range/],
  ])('%s is refused', (given, why) => {
    const r = normaliseAddressEntry(given);
    expect(r.ok).toBe(false);
    expect((r as { message: string }).message).toMatch(why);
  });

  it(`a record takes up to ${MAX_ADDRESSES} entries; address is a list of one; not both; one is required`, () => {
    const base = { id: 'k', key_sha256: 'a'.repeat(64), tier: 'standard' as const, countries: ['GB'], status: 'active' as const };
    const sixteen = Array.from({ length: 16 }, (_, i) => `10.0.${i}.0/24`);
    const ok = checkKeyEntry({ ...base, addresses: [...sixteen, '10.0.0.0/24'] }, true);
    expect(ok).toMatchObject({ ok: true, value: { addresses: sixteen } }); // a duplicate after normalising is dropped
    expect(checkKeyEntry({ ...base, address: '10.0.0.0/24' }, true)).toMatchObject({ ok: true, value: { addresses: ['10.0.0.0/24'] } });
    expect((checkKeyEntry({ ...base, address: '10.0.0.1' }, true) as { value: object }).value).not.toHaveProperty('address');
    expect(checkKeyEntry({ ...base, address: '10.0.0.1', addresses: ['10.0.0.2'] }, true)).toMatchObject({ ok: false, issue: { path: ['addresses'] } });
    expect(checkKeyEntry(base, true)).toMatchObject({ ok: false, issue: { path: ['addresses'], message: expect.stringMatching(/is required/) } });
    expect(checkKeyEntry({ ...base, addresses: ['10.0.0.1', '0.0.0.0/0'] }, true)).toMatchObject({ ok: false, issue: { path: ['addresses', 1] } });
  });
});

describe('address matching', () => {
  it('matches addresses and ranges of both families, IPv4-mapped clients as IPv4', () => {
    const m = addressMatcher(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32', 'fe80::1'].map(normalised));
    for (const ip of ['10.0.0.1', '10.255.255.255', '192.0.2.7', '2001:db8::1', '2001:db8:ffff:ffff::9', 'fe80::1']) expect([ip, m.matches(ip)]).toEqual([ip, true]);
    for (const ip of ['11.0.0.1', '9.255.255.255', '192.0.2.8', '2001:db9::1', 'fe80::2', '::1']) expect([ip, m.matches(ip)]).toEqual([ip, false]);
    expect(addressMatcher([ANY_ADDRESS]).matches('203.0.113.9')).toBe(true);
    expect(addressMatcher(['127.0.0.1']).matches('127.0.0.2')).toBe(false);
  });

  const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((p) => p.join('.'));
  const v6 = fc.array(fc.nat(0xffff), { minLength: 8, maxLength: 8 }).map((p) => ipaddr.fromByteArray(p.flatMap((n) => [n >> 8, n & 255])).toString());
  const entry = fc.oneof(
    v4,
    v6,
    fc.tuple(v4, fc.integer({ min: 1, max: 32 })).map(([a, p]) => `${a}/${p}`),
    fc.tuple(v6, fc.integer({ min: 1, max: 128 })).map(([a, p]) => `${a}/${p}`),
  );

  it('agrees with ipaddr.js on random lists of up to 16 entries and random clients (property)', () => {
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 16 }), fc.array(fc.oneof(v4, v6), { minLength: 1, maxLength: 8 }), (entries, clients) => {
        const kept = entries.map(normalised);
        const m = addressMatcher(kept);
        for (const ip of clients) {
          const client = ipaddr.parse(ip);
          const expected = entries.some((e) => {
            if (!e.includes('/')) return ipaddr.parse(e).toString() === client.toString() || normalised(e) === ipaddr.process(ip).toString();
            const [range, bits] = ipaddr.parseCIDR(e);
            return range.kind() === client.kind() && client.match(range, bits);
          });
          if (m.matches(ipaddr.process(ip).toString()) !== expected) return false;
          // A client inside a range is found too.
          for (const e of kept) {
            if (!e.includes('/')) continue;
            expect(m.matches(e.slice(0, e.indexOf('/')))).toBe(true);
          }
        }
        return true;
      }),
      { numRuns: 300 },
    );
  });
});
