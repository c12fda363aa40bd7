import ipaddr from 'ipaddr.js';

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const DOTTED_QUAD = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);
const MAPPED_PREFIX = '::ffff:';

/**
 * Normalises an IP address (the client's, in observe.ts; a key's registered ones, in
 * keys/address-list.ts) so that equal addresses compare equal as strings: IPv4-mapped IPv6
 * (`::ffff:127.0.0.1`, `::ffff:7f00:1`) becomes IPv4, IPv6 is written in RFC 5952 form, and a
 * zone index is dropped. Returns undefined for anything that is not an address.
 */
export function normaliseAddress(value: string): string | undefined {
  // Fast path for what a socket reports almost always (runs on every request): a canonical
  // dotted quad, bare or IPv4-mapped. Everything else goes through ipaddr.js.
  if (DOTTED_QUAD.test(value)) return value;
  if (value.startsWith(MAPPED_PREFIX) && DOTTED_QUAD.test(value.slice(MAPPED_PREFIX.length))) return value.slice(MAPPED_PREFIX.length);
  const withoutZone = value.includes('%') ? value.slice(0, value.indexOf('%')) : value;
  if (!ipaddr.isValid(withoutZone)) return undefined;
  // ipaddr.isValid accepts legacy IPv4 forms such as "127.1" or "0x7f.1"; a registered
  // address must be written in full, so only four-part decimal IPv4 is taken.
  if (!withoutZone.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(withoutZone)) return undefined;
  return ipaddr.process(withoutZone).toString();
}
