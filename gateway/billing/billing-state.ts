import type { RedisClient } from '../redis/connect';

/**
 * What Stripe's events decided, per account, in Redis: one hash per account whose fields are the
 * decisions (`unpaid`, `invoice`, `dispute:<id>`, `entitlements`), each stored as
 * `<created>|<JSON>`. A decision is replaced only by an event created at the same second or later
 * (on equal `created`, the later arrival wins), in one script per account, so a late older event
 * decides nothing whatever instance it reaches. Kept 35 days after the last write: longer than
 * Stripe retries (3 days) and than event ids are kept (30 days).
 */
const DECIDE = `
local won = {}
for i = 2, #ARGV, 3 do
  local field, created, value = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2]
  local current = redis.call('HGET', KEYS[1], field)
  local stored = current and tonumber(string.match(current, '^(%d+)|')) or nil
  if stored == nil or stored <= created then
    redis.call('HSET', KEYS[1], field, ARGV[i + 1] .. '|' .. value)
    won[#won + 1] = field
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return won
`;

const STATE_TTL_MS = 35 * 86_400_000;
const stateKey = (accountId: string): string => `lgw:billing:stripe:account:${accountId}`;

/** One decision to store: its field, the event's `created` (seconds) and its value. */
export interface Decided {
  readonly field: string;
  readonly value: unknown;
}

/** The account's decisions by field (values parsed). */
export type AccountState = ReadonlyMap<string, unknown>;

export interface BillingState {
  /** Stores the decisions this event wins; returns the fields it won. */
  decide(accountId: string, created: number, decisions: readonly Decided[]): Promise<Set<string>>;
  read(accountId: string): Promise<AccountState>;
}

function parseState(raw: Record<string, string>): AccountState {
  const state = new Map<string, unknown>();
  for (const [field, text] of Object.entries(raw)) {
    const bar = text.indexOf('|');
    try {
      state.set(field, JSON.parse(text.slice(bar + 1)));
    } catch {
      // A value this version did not write: no decision.
    }
  }
  return state;
}

export function redisBillingState(redis: RedisClient): BillingState {
  return {
    async decide(accountId, created, decisions) {
      if (!decisions.length) return new Set();
      const args = decisions.flatMap((d) => [d.field, String(Math.max(0, Math.floor(created))), JSON.stringify(d.value)]);
      const won = (await redis.eval(DECIDE, 1, stateKey(accountId), String(STATE_TTL_MS), ...args)) as string[];
      return new Set(won);
    },
    async read(accountId) {
      return parseState(await redis.hgetall(stateKey(accountId)));
    },
  };
}
