/** Unit-level pieces of the portal attack suite (test/integration/portal-attack.test.ts). */
import type { Response } from 'express';
import { coveredFamily } from '../../gateway/keys/address-list';
import { cookieJar } from '../../gateway/portal/portal-cookies';

test('with an https PORTAL_PUBLIC_URL the session cookie is Secure as well as HttpOnly and SameSite=Lax', () => {
  const lines: string[] = [];
  const res = { append: (_name: string, value: string) => lines.push(value) } as unknown as Response;
  cookieJar(true).set(res, 'lgw_portal', 'id', '/portal', 60);
  cookieJar(true).clear(res, 'lgw_portal', '/portal');
  for (const line of lines) expect(line.split('; ').slice(1)).toEqual(expect.arrayContaining(['Secure', 'HttpOnly', 'SameSite=Lax', 'Path=/portal']));
});

test('coveredFamily: only lists whose ranges leave no address of a family out', () => {
  expect(coveredFamily(['0.0.0.0/1', '128.0.0.0/1'])).toBe('IPv4');
  expect(coveredFamily(['128.0.0.0/1', '0.0.0.0/2', '64.0.0.0/3', '96.0.0.0/3'])).toBe('IPv4');
  expect(coveredFamily(['::/1', '8000::/1'])).toBe('IPv6');
  expect(coveredFamily(['0.0.0.0/1', '128.0.0.0/2', '192.0.0.0/2', 'junk', 'any'])).toBe('IPv4');
  expect(coveredFamily(['0.0.0.0/1', '128.0.0.0/2', '192.0.0.0/3'])).toBeUndefined();
  expect(coveredFamily(['0.0.0.0/1', '::/1', '255.255.255.255'])).toBeUndefined();
  expect(coveredFamily(['10.0.0.1', '2001:db8::/32'])).toBeUndefined();
});
