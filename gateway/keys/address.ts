import ipaddr from 'ipaddr.js';

/**
 * Normalises an IP address so that equal addresses compare equal as strings: IPv4-mapped IPv6
 * (`::ffff:127.0.0.1`, `::ffff:7f00:1`) becomes IPv4, IPv6 is written in RFC 5952 form, and a
 * zone index is dropped. Returns undefined for anything that is not an address.
 */
export function normaliseAddress(value: string): string | undefined {
  const withoutZone = value.includes('%') ? value.slice(0, value.indexOf('%')) : value;
  if (!ipaddr.isValid(withoutZone)) return undefined;
  // ipaddr.isValid accepts legacy IPv4 forms such as "127.1" or "0x7f.1"; a registered
  // address must be written in full, so only four-part decimal IPv4 is taken.
  if (!withoutZone.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(withoutZone)) return undefined;
  return ipaddr.process(withoutZone).toString();
}
