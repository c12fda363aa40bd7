/**
 * The one interleaving the Stripe suite's race test cannot force from outside: an older event wins
 * its decision, reads the account's state, and is held before it changes the keys; a newer event
 * then decides, applies and finishes; the older one's change lands last. applyToAccount reads the
 * state again after applying and applies what moved, so the keys end as the newer event says. With
 * its re-read loop removed (one round), the keys end as the older event said: this test fails.
 * Real redis-server for the state (its script decides); the key changes recorded by a twin of
 * BillingApply, which the gate holds.
 */
import pino from 'pino';
import type { BillingApply } from '../../gateway/billing/billing-apply';
import { applyToAccount } from '../../gateway/billing/billing-events';
import { redisBillingState } from '../../gateway/billing/billing-state';
import type { Decision } from '../../gateway/billing/stripe-events';
import { redisForSuite } from '../kit/redis-server';

const suite = redisForSuite();

/** The keys' unpaid_renewal reason as the twin holds it, and a gate that holds the first change made while it is shut. */
function keysTwin() {
  const keys = { unpaid: false, changes: [] as boolean[] };
  let shut: { release: () => void; reached: () => void } | undefined;
  let opened!: () => void;
  let reached!: () => void;
  const gate = { opened: new Promise<void>((r) => (opened = r)), reached: new Promise<void>((r) => (reached = r)) };
  const apply: BillingApply = {
    async reason(_account, _reason, hold) {
      if (shut) {
        const s = shut;
        shut = undefined;
        s.reached();
        await gate.opened;
      }
      keys.changes.push(hold);
      if (keys.unpaid === hold) return 0;
      keys.unpaid = hold;
      return 1;
    },
    entitlements: async () => 0,
    revoke: async () => 0,
  };
  return { keys, apply, shutGate: () => (shut = { release: opened, reached }), open: () => opened(), reached: gate.reached };
}

const unpaid = (value: boolean): Decision[] => [{ kind: 'unpaid', unpaid: value } as Decision];
const origin = { actor: { name: 'billing:stripe:test', channel: 'billing' as const } };
const logger = pino({ level: 'silent' });

test.each([
  ['an older payment held while a newer failed renewal applies: the key ends paused', false, true],
  ['an older failed renewal held while a newer payment applies: the key ends not paused', true, false],
])('%s', async (_name, olderSays, newerSays) => {
  const account = `acct-${olderSays}`;
  const state = redisBillingState(suite.redis);
  const twin = keysTwin();
  const deps = { state, apply: twin.apply, origin, logger };
  const t = Math.floor(Date.now() / 1000);

  twin.shutGate();
  const older = applyToAccount(account, t, unpaid(olderSays), deps); // decides, reads, then waits at the gate
  await twin.reached;
  await applyToAccount(account, t + 1, unpaid(newerSays), deps); // decides, applies, finishes
  expect(twin.keys.unpaid).toBe(newerSays);
  twin.open(); // the older event's change lands last
  await older;

  expect(twin.keys.changes[1]).toBe(olderSays); // the stale change did land...
  expect(twin.keys.unpaid).toBe(newerSays); // ...and was undone by the re-read
});
