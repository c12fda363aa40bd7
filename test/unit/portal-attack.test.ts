/** Unit-level pieces of the portal attack suite (test/integration/portal-attack.test.ts). */
import type { Response } from 'express';
import { everyAddressFamilies } from '../../gateway/keys/address-list';
import { cookieJar } from '../../gateway/portal/portal-cookies';

test('with an https PORTAL_PUBLIC_URL the session cookie is Secure as well as HttpOnly and SameSite=Lax', () => {
  const lines: string[] = [];
  const res = { append: (_name: string, value: string) => lines.push(value) } as unknown as Response;
  cookieJar(true).set(res, 'lgw_portal', 'id', '/portal', 60);
  cookieJar(true).clear(res, 'lgw_portal', '/portal');
  for (const line of lines) expect(line.split('; ').slice(1)).toEqual(expect.arrayContaining(['Secure', 'HttpOnly', 'SameSite=Lax', 'Path=/portal']));
});

test('everyAddressFamilies: a list counts as every address by the share it admits, not by how it is written', () => {
  expect(everyAddressFamilies(['0.0.0.0/1', '128.0.0.0/1'])).toEqual(['IPv4']);
  expect(everyAddressFamilies(['128.0.0.0/1', '0.0.0.0/2', '64.0.0.0/3', '96.0.0.0/3'])).toEqual(['IPv4']);
  expect(everyAddressFamilies(['::/1', '8000::/1'])).toEqual(['IPv6']);
  expect(everyAddressFamilies(['0.0.0.0/1', '128.0.0.0/2', '192.0.0.0/2', 'junk'])).toEqual(['IPv4']);
  expect(everyAddressFamilies(['any'])).toEqual(['IPv4', 'IPv6']);
  expect(everyAddressFamilies(['ANY'])).toEqual(['IPv4', 'IPv6']);
  // All but 240.0.0.0/4, and its IPv6 analogue (issue examples): no longer spelling-dependent.
  expect(everyAddressFamilies(['0.0.0.0/1', '128.0.0.0/2', '192.0.0.0/3', '224.0.0.0/4'])).toEqual(['IPv4']);
  expect(everyAddressFamilies(['::/1', '8000::/2', 'c000::/3', 'e000::/4'])).toEqual(['IPv6']);
  expect(everyAddressFamilies(['0.0.0.0/1', '::/1', '255.255.255.255'])).toEqual(['IPv4', 'IPv6']);
  // More than a /8 of IPv4 or a /32 of IPv6, overlaps counted once.
  expect(everyAddressFamilies(['10.0.0.0/8', '11.0.0.0/8'])).toEqual(['IPv4']);
  expect(everyAddressFamilies(['10.0.0.0/8', '10.0.0.0/9', '10.1.2.3', '::ffff:10.0.0.0/104'])).toEqual([]);
  expect(everyAddressFamilies(['2001:db8::/32', '2001:db8:1::/48'])).toEqual([]);
  expect(everyAddressFamilies(['2001:db8::/31'])).toEqual(['IPv6']);
  expect(everyAddressFamilies(['10.0.0.1', '2001:db8::/32'])).toEqual([]);
});
