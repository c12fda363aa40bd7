/**
 * The unauthenticated budget's own rules (gateway/policies/refused-auth-budget.ts), beside the
 * integration suite that drives it through a gateway (security-unauthenticated-budget.test.ts):
 * charged per UTC minute, an IPv6 address by its /64, a bounded map, and a hot reload.
 */
import { createRefusedAuthBudget } from '../../gateway/policies/refused-auth-budget';

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

test('at most 100,000 addresses are charged per minute: past that, new ones go unbudgeted, known ones stay charged', () => {
  const budget = createRefusedAuthBudget(1);
  for (let i = 0; i < 100_000; i++) budget.charge(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, at(1));
  expect(budget.waitFor('10.0.0.1', at(2))).toBeGreaterThan(0);
  budget.charge('203.0.113.9', at(2));
  expect(budget.waitFor('203.0.113.9', at(3))).toBe(0);
});
