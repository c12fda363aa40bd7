import { createMemoryPortalSessions, csrfMatches, SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from '../../gateway/portal/portal-sessions';
import { createMemorySignInBudget, FAILED_SIGN_INS_PER_MINUTE } from '../../gateway/portal/sign-in-budget';
import { createMemoryPendingLogins, PENDING_LOGIN_MS } from '../../gateway/portal/pending-logins';

describe('portal sessions (memory twin of the Redis store)', () => {
  test('end after 30 minutes idle', async () => {
    let now = 1_000_000;
    const store = createMemoryPortalSessions(() => now);
    const s = await store.create('acme', null);
    now += SESSION_IDLE_MS - 1000;
    expect(await store.get(s.id)).toMatchObject({ accountId: 'acme' });
    now += SESSION_IDLE_MS - 1000; // each request restarts the idle time
    expect(await store.get(s.id)).toBeDefined();
    now += SESSION_IDLE_MS;
    expect(await store.get(s.id)).toBeUndefined();
  });

  test('end 8 hours after sign-in however busy', async () => {
    let now = 0;
    const store = createMemoryPortalSessions(() => now);
    const s = await store.create('acme', 'ops@acme.test');
    while (now < SESSION_ABSOLUTE_MS - 10 * 60_000) {
      now += 10 * 60_000;
      expect(await store.get(s.id)).toBeDefined();
    }
    now = SESSION_ABSOLUTE_MS;
    expect(await store.get(s.id)).toBeUndefined();
  });

  test('end at sign-out; unknown and malformed ids find nothing; CSRF compared exactly', async () => {
    const store = createMemoryPortalSessions();
    const s = await store.create('acme', null);
    expect(csrfMatches(s, s.csrf)).toBe(true);
    expect(csrfMatches(s, `${s.csrf}x`)).toBe(false);
    expect(csrfMatches(s, [s.csrf])).toBe(false);
    expect(csrfMatches(s, undefined)).toBe(false);
    await store.end(s.id);
    expect(await store.get(s.id)).toBeUndefined();
    expect(await store.get('not-an-id')).toBeUndefined();
  });
});

test('the failed sign-in budget: 10 attempts per address and minute, counted as they start, then refused until the minute ends; a success is given back', async () => {
  let now = 60_000 * 1000 + 5_000;
  const budget = createMemorySignInBudget(FAILED_SIGN_INS_PER_MINUTE, () => now);
  for (let i = 0; i < 10; i++) expect(await budget.take('10.0.0.1')).toBe(true);
  expect(await budget.take('10.0.0.1')).toBe(false);
  expect(await budget.take('10.0.0.2')).toBe(true);
  expect(budget.retryAfterSeconds()).toBe(55);
  await budget.giveBack('10.0.0.1'); // one of the ten signed in: only failures count
  expect(await budget.take('10.0.0.1')).toBe(true);
  expect(await budget.take('10.0.0.1')).toBe(false);
  now += 55_000;
  expect(await budget.take('10.0.0.1')).toBe(true);
});

test('the memory sign-in budget is bounded: past 10,000 addresses in a minute the others share one budget, never off', async () => {
  const now = 60_000 * 1000 + 1_000;
  const budget = createMemorySignInBudget(FAILED_SIGN_INS_PER_MINUTE, () => now);
  for (let i = 0; i < 10_000; i++) await budget.take(`10.1.${i >> 8}.${i & 255}`);
  // A fresh address is not tracked alone any more: it shares the overflow budget with every other.
  for (let i = 0; i < FAILED_SIGN_INS_PER_MINUTE; i++) expect(await budget.take(`2001:db8::${i.toString(16)}`)).toBe(true);
  expect(await budget.take('2001:db8::ffff')).toBe(false);
  // An address in the table keeps its own count.
  expect(await budget.take('10.1.0.0')).toBe(true);
});

test('a pending OpenID sign-in is taken once, and not after 10 minutes', async () => {
  let now = 0;
  const pending = createMemoryPendingLogins(() => now);
  const login = { state: 's', codeVerifier: 'v', nonce: 'n' };
  await pending.put('a', login);
  expect(await pending.take('a')).toEqual(login);
  expect(await pending.take('a')).toBeUndefined();
  await pending.put('b', login);
  now += PENDING_LOGIN_MS;
  expect(await pending.take('b')).toBeUndefined();
});

test('pending OpenID sign-ins in memory are bounded: past the cap the oldest goes, expired ones are dropped from the front', async () => {
  let now = 0;
  const pending = createMemoryPendingLogins(() => now, 100);
  const login = { state: 's', codeVerifier: 'v', nonce: 'n' };
  for (let i = 0; i < 250; i++) await pending.put(`id${i}`, login);
  expect(pending.size()).toBe(100);
  expect(await pending.take('id149')).toBeUndefined();
  expect(await pending.take('id150')).toEqual(login);
  now += PENDING_LOGIN_MS;
  await pending.put('late', login);
  expect(pending.size()).toBe(1);
});
