// gateway/usage/: usage history: the in-process recorder, Redis and memory stores, retention, the daily
// query, reports (JSON, CSV, CLI tables) and the admin routes (daily usage, monthly report).
/**
 * What usage history counts, per key and UTC day: the requests answered 200 (`accepted`) and the
 * refusals that come after the key is known, by code. Refusals before the key is known
 * (`unauthenticated`, `not_found` of the path, `method_not_allowed`) belong to no key.
 */
export const REFUSAL_CODES = [
  'ip_not_allowed',
  'key_paused',
  'upgrade_required',
  'rate_limited',
  'quota_exceeded',
  'invalid_parameter',
  'country_not_entitled',
  'invalid_cursor',
] as const;

export type RefusalCode = (typeof REFUSAL_CODES)[number];
/** A counted outcome: `accepted` or a refusal code. */
export type UsageField = 'accepted' | RefusalCode;

const REFUSALS: ReadonlySet<string> = new Set(REFUSAL_CODES);
export const isRefusalCode = (code: string): code is RefusalCode => REFUSALS.has(code);

export interface UsageCounts {
  accepted: number;
  refused: Partial<Record<RefusalCode, number>>;
}

/** One increment to store: `count` more of `field` for `keyId` on `day` (YYYY-MM-DD, UTC). */
export interface UsageEntry {
  readonly keyId: string;
  readonly day: string;
  readonly field: UsageField;
  readonly count: number;
}

/**
 * Whether a failed write may have been applied, so that sending it again could count twice. Only two
 * failures say it surely was not: Redis answered with an error (a reply error), or the client never
 * wrote it (no connection, and no offline queue). Since unanswered commands are not re-sent after a
 * reconnect (gateway/redis/connect.ts), a command cut after it was written fails with a timeout, a
 * "Connection is closed" or a retries-exhausted error, all of which may follow Redis running it.
 */
export const mayHaveApplied = (err: unknown): boolean => {
  if ((err as { name?: unknown } | undefined)?.name === 'ReplyError') return false;
  return !/Stream isn't writeable/i.test(String((err as Error | undefined)?.message ?? err));
};

/**
 * A batch the store wrote in part (its commands go to different keys, on a cluster to different
 * nodes, so some may fail while others are applied). `retry` may be sent again without counting
 * anything twice: the failed increments, and increments of 0 where only the bookkeeping of a
 * month's hash (index, expiry) failed; `uncertain` requests are in increments that timed out.
 */
export class PartialUsageWrite extends Error {
  constructor(
    message: string,
    readonly retry: readonly UsageEntry[],
    readonly uncertain: number,
  ) {
    super(message);
  }
}

export const emptyCounts = (): UsageCounts => ({ accepted: 0, refused: {} });

/** Adds `count` of `field` to `into` (mutates, returns it). */
export function addTo(into: UsageCounts, field: UsageField, count: number): UsageCounts {
  if (field === 'accepted') into.accepted += count;
  else into.refused[field] = (into.refused[field] ?? 0) + count;
  return into;
}

/**
 * Where history lives: Redis (shared by every instance) or memory (the embedded mode). Both keep
 * days for at least 400 days and month totals for at least 25 months.
 */
export interface UsageStore {
  add(entries: readonly UsageEntry[]): Promise<void>;
  /** The days in [from, to] (YYYY-MM-DD, inclusive) on which the key has any count. */
  days(keyId: string, from: string, to: string): Promise<Map<string, UsageCounts>>;
  /** The totals of every key with any count in `month` (YYYY-MM). */
  month(month: string): Promise<Map<string, UsageCounts>>;
}
