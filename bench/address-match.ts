/**
 * `npx tsx bench/address-match.ts`: the per-request cost of binding a key to its addresses, for a
 * key with one plain address (the first release's only case) and for a key with 16 CIDR ranges
 * (the most a record may hold: 8 IPv4 and 8 IPv6 ranges, every one a different prefix length, so
 * the matcher does its largest number of look-ups), for a client inside the last range and one
 * outside them all (the worst case: every prefix length tried). In-process, the matcher alone, as
 * the bind-address policy calls it; median of 7 rounds of 200,000 calls each.
 */
import { performance } from 'node:perf_hooks';
import { addressMatcher, normaliseAddressEntry } from '../gateway/keys/address-list';

const ROUNDS = 7;
const CALLS = 200_000;

const normalised = (entries: string[]): string[] =>
  entries.map((e) => {
    const r = normaliseAddressEntry(e);
    if (!r.ok) throw new Error(r.message);
    return r.value;
  });

const CIDRS_16 = normalised([
  '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '198.51.100.0/24', '203.0.113.0/25', '100.64.0.0/10', '192.0.2.0/27', '198.18.0.0/15',
  '2001:db8::/32', '2001:db8:1::/48', '2001:db8:2:3::/64', 'fd00::/8', 'fe80::/10', '2001:db8:4::/56', '2001:db8:5:6::/96', '2001:db8:7::/40',
]);

function nsPerCall(entries: string[], clientIp: string, expected: boolean): number {
  const matcher = addressMatcher(entries);
  if (matcher.matches(clientIp) !== expected) throw new Error(`${clientIp}: expected ${expected}`);
  const rounds: number[] = [];
  let sink = 0;
  for (let warm = 0; warm < CALLS; warm++) sink += matcher.matches(clientIp) ? 1 : 0;
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now();
    for (let i = 0; i < CALLS; i++) sink += matcher.matches(clientIp) ? 1 : 0;
    rounds.push(((performance.now() - start) * 1e6) / CALLS);
  }
  if (sink < 0) console.log(sink);
  return rounds.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!;
}

export function measureAddressMatching(): Array<{ case: string; ns: number }> {
  return [
    { case: 'one address, client matches', ns: nsPerCall(['127.0.0.1'], '127.0.0.1', true) },
    { case: '16 CIDRs, IPv4 client in the last IPv4 range', ns: nsPerCall(CIDRS_16, '198.18.4.5', true) },
    { case: '16 CIDRs, IPv4 client in no range', ns: nsPerCall(CIDRS_16, '8.8.8.8', false) },
    { case: '16 CIDRs, IPv6 client in the last IPv6 range', ns: nsPerCall(CIDRS_16, '2001:db8:7f::1', true) },
    { case: '16 CIDRs, IPv6 client in no range', ns: nsPerCall(CIDRS_16, '2a00:1450::1', false) },
  ];
}

if (require.main === module) {
  console.log('| Key addresses, client | ns per request |\n|---|---:|');
  for (const row of measureAddressMatching()) console.log(`| ${row.case} | ${row.ns.toFixed(0)} |`);
}
