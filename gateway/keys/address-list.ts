import ipaddr from 'ipaddr.js';
import { normaliseAddress } from '../client-address';

export { MAX_ADDRESSES } from './record-bounds';
/**
 * The explicit spelling of "from any address". A `/0` range (`0.0.0.0/0`, `::/0`) is refused: it is
 * far more often a slip than an intention, and an unbound key must be visible as such in a record.
 */
export const ANY_ADDRESS = 'any';

/**
 * Normalises one entry of a key's address list: an IPv4 or IPv6 address (as `normaliseAddress`), or
 * a CIDR range written as its network (`10.0.0.7/24` → `10.0.0.0/24`; IPv4-mapped IPv6 ranges as
 * IPv4: `::ffff:10.0.0.0/104` → `10.0.0.0/8`; `/32` and `/128` as the plain address), or `any`.
 * Returns the normalised entry, or why it is refused.
 */
export function normaliseAddressEntry(value: string): { ok: true; value: string } | { ok: false; message: string } {
  if (value === ANY_ADDRESS) return { ok: true, value };
  const slash = value.indexOf('/');
  if (slash < 0) {
    const address = normaliseAddress(value);
    return address ? { ok: true, value: address } : { ok: false, message: `"${value}" is not an IPv4 or IPv6 address or CIDR range` };
  }
  const base = value.slice(0, slash);
  const bits = value.slice(slash + 1);
  const bad = { ok: false, message: `"${value}" is not an IPv4 or IPv6 address or CIDR range` } as const;
  if (!/^[0-9]{1,3}$/.test(bits) || base.includes('%')) return bad;
  if (!base.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(base)) return bad;
  if (!ipaddr.isValid(base)) return bad;
  let address = ipaddr.parse(base);
  let prefix = Number(bits);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    if (prefix < 96) return { ok: false, message: `"${value}": an IPv4-mapped range needs a prefix of at least 96` };
    address = (address as ipaddr.IPv6).toIPv4Address();
    prefix -= 96;
  }
  const width = address.kind() === 'ipv4' ? 32 : 128;
  if (prefix > width) return { ok: false, message: `"${value}": the prefix length is at most ${width}` };
  if (prefix === 0) return { ok: false, message: `"${value}" allows every address; if that is meant, write "${ANY_ADDRESS}"` };
  const network = address.kind() === 'ipv4'
    ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${prefix}`)
    : ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${prefix}`);
  return { ok: true, value: prefix === width ? network.toString() : `${network.toString()}/${prefix}` };
}

/**
 * Whether a client address is one a key may be used from. Built once per record (at load or cache
 * fill), so a request costs a Set look-up for exact addresses plus one masked look-up per distinct
 * prefix length among the key's ranges (at most 16): no parsing of the ranges per request.
 */
export interface AddressMatcher {
  matches(clientIp: string): boolean;
}

/**
 * The client address (normalised by the gateway) as an unsigned 32-bit number, or -1 if it is not
 * a dotted quad. Read digit by digit: a regular expression here costs more than the look-ups.
 */
function ipv4Number(ip: string): number {
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < ip.length; i++) {
    const c = ip.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      part = part * 10 + (c - 48);
      if (++digits > 3 || part > 255) return -1;
    } else if (c === 46 && digits > 0 && dots < 3) {
      value = value * 256 + part;
      part = 0;
      digits = 0;
      dots++;
    } else {
      return -1;
    }
  }
  if (dots !== 3 || digits === 0) return -1;
  return value * 256 + part;
}

const ZEROS = '0000';

/**
 * An IPv6 address as its 32 hex digits (lower case), or undefined if it is not IPv6. Written out
 * by hand for the request path: ipaddr.js parsing plus BigInt arithmetic cost several µs per call.
 */
function ipv6Hex(ip: string): string | undefined {
  if (!ip.includes(':')) return undefined;
  if (ip.includes('.') || ip.includes('%')) {
    if (!ipaddr.IPv6.isValid(ip)) return undefined;
    return ipaddr.IPv6.parse(ip).parts.map((p) => p.toString(16).padStart(4, '0')).join('');
  }
  const gap = ip.indexOf('::');
  const head = gap < 0 ? ip.split(':') : ip.slice(0, gap) === '' ? [] : ip.slice(0, gap).split(':');
  const tail = gap < 0 ? [] : ip.slice(gap + 2) === '' ? [] : ip.slice(gap + 2).split(':');
  const missing = 8 - head.length - tail.length;
  if (gap < 0 ? missing !== 0 : missing < 1) return undefined;
  let hex = '';
  for (const group of head) {
    if (group.length === 0 || group.length > 4) return undefined;
    hex += ZEROS.slice(group.length) + group;
  }
  for (let i = 0; i < missing; i++) hex += ZEROS;
  for (const group of tail) {
    if (group.length === 0 || group.length > 4) return undefined;
    hex += ZEROS.slice(group.length) + group;
  }
  hex = hex.toLowerCase();
  return /^[0-9a-f]{32}$/.test(hex) ? hex : undefined;
}

/** The first `prefix` bits of a 32-digit hex address, as a string key. */
function v6Prefix(hex: string, prefix: number): string {
  const whole = prefix >> 2;
  const rest = prefix & 3;
  if (rest === 0) return hex.slice(0, whole);
  return hex.slice(0, whole) + (parseInt(hex[whole]!, 16) >> (4 - rest)).toString(16);
}

/** The first `prefix` bits (1..32) of an IPv4 number; a small integer, cheap to hash. */
const maskV4 = (n: number, prefix: number): number => n >>> (32 - prefix);

/** Builds the matcher of a normalised address list (entries as `normaliseAddressEntry` gives them). */
export function addressMatcher(entries: readonly string[]): AddressMatcher {
  if (entries.includes(ANY_ADDRESS)) return { matches: () => true };
  const exact = new Set<string>();
  const v4 = new Map<number, Set<number>>();
  const v6 = new Map<number, Set<string>>();
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    if (slash < 0) {
      exact.add(entry);
      continue;
    }
    const prefix = Number(entry.slice(slash + 1));
    const base = entry.slice(0, slash);
    if (base.includes(':')) {
      const set = v6.get(prefix) ?? new Set<string>();
      set.add(v6Prefix(ipv6Hex(base)!, prefix));
      v6.set(prefix, set);
    } else {
      const set = v4.get(prefix) ?? new Set<number>();
      set.add(maskV4(ipv4Number(base), prefix));
      v4.set(prefix, set);
    }
  }
  const v4Ranges = [...v4.entries()];
  const v6Ranges = [...v6.entries()];
  if (!v4Ranges.length && !v6Ranges.length) {
    // The common case (one or a few plain addresses): a Set look-up, nothing else.
    if (exact.size === 1) {
      const only = entries[0]!;
      return { matches: (ip) => ip === only };
    }
    return { matches: (ip) => exact.has(ip) };
  }
  return {
    matches(ip) {
      if (exact.has(ip)) return true;
      if (v4Ranges.length) {
        const n = ipv4Number(ip);
        if (n >= 0) {
          for (const [prefix, set] of v4Ranges) if (set.has(maskV4(n, prefix))) return true;
          return false;
        }
      }
      if (v6Ranges.length) {
        const hex = ipv6Hex(ip);
        if (hex !== undefined) for (const [prefix, set] of v6Ranges) if (set.has(v6Prefix(hex, prefix))) return true;
      }
      return false;
    },
  };
}

/** An address or range of `normaliseAddressEntry`'s output as [first, last + 1] in its family. */
function span(entry: string): { kind: string; from: bigint; to: bigint } {
  const [address, prefix] = entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), undefined];
  const width = address.kind() === 'ipv4' ? 32 : 128;
  const from = BigInt(`0x${Buffer.from(address.toByteArray()).toString('hex')}`);
  return { kind: address.kind(), from, to: from + (1n << BigInt(width - (prefix ?? width))) };
}

/**
 * How much of a family's space a key's list may admit before it counts as every address: a /8's
 * worth of IPv4 (16,777,216 addresses, the largest block ever given to one organisation) and a
 * /32's worth of IPv6 (a whole provider's allocation). Measured on the union of the ranges, so it
 * does not depend on how they are written (`0.0.0.0/1 128.0.0.0/2 …`, sixteen /8s and one /7 alike).
 */
export const WIDEST_SHARE: Readonly<Record<'IPv4' | 'IPv6', bigint>> = { IPv4: 1n << 24n, IPv6: 1n << 96n };
export type AddressFamily = keyof typeof WIDEST_SHARE;

/** The addresses of one family the spans admit between them (overlaps counted once). */
function unionSize(spans: ReadonlyArray<{ from: bigint; to: bigint }>): bigint {
  let total = 0n;
  let end = 0n;
  for (const s of [...spans].sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0))) {
    const from = s.from > end ? s.from : end;
    if (s.to > from) total += s.to - from;
    if (s.to > end) end = s.to;
  }
  return total;
}

/**
 * The one rule of "every address": the families a list opens as `any` would, `any` itself opening
 * both, and ranges whose union admits more than WIDEST_SHARE of a family. An operator needs the
 * admin role to widen a key so (gateway/keys/change-role.ts); the holders' portal refuses it unless
 * `allow_any_address`. Entries that do not parse are left to the other checks.
 */
export function everyAddressFamilies(entries: readonly string[]): AddressFamily[] {
  if (entries.some((e) => e.toLowerCase() === ANY_ADDRESS)) return ['IPv4', 'IPv6'];
  const spans = entries.flatMap((e) => {
    const n = normaliseAddressEntry(e);
    return n.ok && n.value !== ANY_ADDRESS ? [span(n.value)] : [];
  });
  return (['IPv4', 'IPv6'] as const).filter((family) => unionSize(spans.filter((x) => x.kind === family.toLowerCase())) > WIDEST_SHARE[family]);
}
