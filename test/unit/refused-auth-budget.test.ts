/**
 * The unauthenticated budget's own rules (gateway/limits/refused-auth-table.ts), beside the
 * integration suite that drives it through a gateway (security-unauthenticated-budget.test.ts):
 * charged per UTC minute, an IPv6 address by its /64, a bounded table that degrades to the
 * address's network then to one shared budget (never to off), and a hot reload.
 */
import { createRefusedAuthBudget, DEFAULT_REFUSED_AUTH_TRACKED } from '../../gateway/limits/refused-auth-table';

const MINUTE = 60_000;
const T0 = 1_700_000_040_000; // a whole minute
const at = (seconds: number): number => T0 + seconds * 1000;

test('an address over its budget waits until the minute ends; the next minute starts afresh', () => {
  const budget = createRefusedAuthBudget(2);
  budget.charge('198.51.100.7', at(1));
  expect(budget.waitFor('198.51.100.7', at(2))).toBe(0);
  budget.charge('198.51.100.7', at(3));
  expect(budget.waitFor('198.51.100.7', at(20))).toBe(40);
  expect(budget.waitFor('198.51.100.7', at(59.5))).toBe(1);
  expect(budget.waitFor('198.51.100.8', at(20))).toBe(0);
  expect(budget.waitFor('198.51.100.7', T0 + MINUTE)).toBe(0);
});

test('IPv6 addresses are charged by their /64, whatever their spelling', () => {
  const budget = createRefusedAuthBudget(2);
  budget.charge('2001:db8:1:2::1', at(1));
  budget.charge('2001:0db8:0001:0002:ffff:0:0:9', at(2));
  expect(budget.waitFor('2001:db8:1:2:abcd::5', at(3))).toBeGreaterThan(0);
  expect(budget.waitFor('2001:db8:1:3::1', at(3))).toBe(0);
});

test('0 is off; an update applies the new budget and forgets the charges', () => {
  const off = createRefusedAuthBudget(0);
  for (let i = 0; i < 10; i++) off.charge('198.51.100.7', at(1));
  expect(off.waitFor('198.51.100.7', at(2))).toBe(0);

  const budget = createRefusedAuthBudget(1);
  budget.charge('198.51.100.7', at(1));
  expect(budget.waitFor('198.51.100.7', at(2))).toBeGreaterThan(0);
  budget.update(5);
  expect(budget.perMinute).toBe(5);
  expect(budget.waitFor('198.51.100.7', at(3))).toBe(0);
});

/** How many refused authentications the address may cause before it waits (up to `most`). */
function refusalsBeforeWait(budget: ReturnType<typeof createRefusedAuthBudget>, ip: string, most: number, nowMs: number): number {
  for (let n = 0; n < most; n++) {
    if (budget.waitFor(ip, nowMs) > 0) return n;
    budget.charge(ip, nowMs);
  }
  return most;
}

const ipv4 = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

test('100,001 addresses in a minute: the table is full, yet a fresh address waits after 60 refusals (its /24 is charged)', () => {
  expect(DEFAULT_REFUSED_AUTH_TRACKED).toBe(100_000);
  const budget = createRefusedAuthBudget(60);
  for (let i = 0; i < 100_001; i++) budget.charge(ipv4(i), at(1));
  // Known addresses stay charged at their own scope.
  expect(budget.waitFor(ipv4(7), at(2))).toBe(0);
  for (let i = 0; i < 59; i++) budget.charge(ipv4(7), at(2));
  expect(budget.waitFor(ipv4(7), at(2))).toBeGreaterThan(0);
  // A fresh address in a fresh network has the network's budget: 60 refusals, then it waits.
  const fresh = refusalsBeforeWait(budget, '203.0.113.9', 300, at(3));
  process.stdout.write(`refused-auth budget, table full (100,001 addresses): a fresh address waits after ${fresh} refusals\n`);
  expect(fresh).toBe(60);
  // Its neighbours in the /24 share that budget for the rest of the minute; another network does not.
  expect(budget.waitFor('203.0.113.200', at(4))).toBeGreaterThan(0);
  expect(budget.waitFor('198.51.100.1', at(4))).toBe(0);
  // The next minute starts afresh.
  expect(budget.waitFor('203.0.113.9', T0 + MINUTE)).toBe(0);
});

test('a small table degrades address → network → one shared budget, never off (IPv6: /64, /48)', () => {
  const budget = createRefusedAuthBudget(2, 3);
  expect(budget.tracked).toBe(3);
  // Three /64s fill the address scope.
  for (const net of ['2001:db8:a:1::1', '2001:db8:b:1::1', '2001:db8:c:1::1']) budget.charge(net, at(1));
  // A fourth /64 is charged by its /48, shared with every other /64 of that /48.
  expect(refusalsBeforeWait(budget, '2001:db8:a:2::1', 10, at(2))).toBe(2);
  expect(budget.waitFor('2001:db8:a:ffff::9', at(2))).toBeGreaterThan(0);
  // Two more /48s fill the network scope; then every fresh network shares one budget.
  budget.charge('2001:db8:d:1::1', at(3));
  budget.charge('2001:db8:e:1::1', at(3));
  expect(refusalsBeforeWait(budget, '2001:db8:f:1::1', 10, at(4))).toBe(2);
  expect(budget.waitFor('192.0.2.1', at(4))).toBeGreaterThan(0);
  // Addresses and networks charged before the table filled keep their own budget.
  expect(budget.waitFor('2001:db8:b:1::1', at(4))).toBe(0);
  expect(budget.waitFor('2001:db8:d:1::77', at(4))).toBe(0);
});

test('an update sets the table size and forgets the charges', () => {
  const budget = createRefusedAuthBudget(1, 1);
  budget.charge('198.51.100.7', at(1));
  budget.charge('203.0.113.1', at(1));
  expect(budget.waitFor('203.0.113.2', at(2))).toBeGreaterThan(0);
  budget.update(1, 10);
  expect(budget.tracked).toBe(10);
  expect(budget.waitFor('203.0.113.2', at(2))).toBe(0);
  budget.charge('203.0.113.1', at(2));
  expect(budget.waitFor('203.0.113.2', at(2))).toBe(0);
});
