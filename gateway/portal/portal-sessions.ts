import { createHash, randomBytes } from 'node:crypto';
import { formTokenMatches } from '../http/form-token';
import type { RedisClient } from '../redis/connect';

/** A session ends this long after sign-in, whatever happens (docs/portal.md). */
export const SESSION_ABSOLUTE_MS = 8 * 3600_000;
/** ... and this long after its last request. */
export const SESSION_IDLE_MS = 30 * 60_000;
/** The last-seen time is written at most this often (each write costs a Redis round trip). */
const TOUCH_EVERY_MS = 15_000;

/** A signed-in key holder. `email` is the identity used (OpenID Connect); null for a one-time link. */
export interface PortalSession {
  readonly id: string;
  readonly accountId: string;
  readonly email: string | null;
  /** Sent in a hidden field of every form; a POST without it is refused. */
  readonly csrf: string;
  readonly createdAt: number;
  readonly lastSeenAt: number;
}

/**
 * Where sessions live: shared by every instance (Redis) so a holder's next request may land on any
 * of them, or this process's memory for the embedded store (one instance). Only the SHA-256 of a
 * session id is used as the storage key: a copy of the store cannot be replayed as cookies.
 */
export interface PortalSessionStore {
  create(accountId: string, email: string | null): Promise<PortalSession>;
  /** The live session of this id (touched: idle time restarts), or undefined (unknown, ended, expired). */
  get(id: string): Promise<PortalSession | undefined>;
  end(id: string): Promise<void>;
}

type Stored = Omit<PortalSession, 'id'>;

const digest = (id: string): string => createHash('sha256').update(id).digest('hex');
const newId = (): string => randomBytes(32).toString('base64url');
const VALID_ID = /^[A-Za-z0-9_-]{43}$/;

/** Time left before either limit ends the session (<= 0: ended). */
function remainingMs(s: Stored, now: number): number {
  return Math.min(s.createdAt + SESSION_ABSOLUTE_MS, s.lastSeenAt + SESSION_IDLE_MS) - now;
}

/** Constant-time check of a form's CSRF field against the session's. */
export function csrfMatches(session: PortalSession, given: unknown): boolean {
  return formTokenMatches(session.csrf, given);
}

function fresh(accountId: string, email: string | null, now: number): Stored {
  return { accountId, email, csrf: randomBytes(32).toString('base64url'), createdAt: now, lastSeenAt: now };
}

/** Sessions in this process (the embedded store). Expired ones are swept at each sign-in. */
export function createMemoryPortalSessions(now: () => number = Date.now): PortalSessionStore {
  const sessions = new Map<string, Stored>();
  return {
    async create(accountId, email) {
      const t = now();
      for (const [k, s] of sessions) if (remainingMs(s, t) <= 0) sessions.delete(k);
      const id = newId();
      const stored = fresh(accountId, email, t);
      sessions.set(digest(id), stored);
      return { id, ...stored };
    },
    async get(id) {
      if (!VALID_ID.test(id)) return undefined;
      const k = digest(id);
      const s = sessions.get(k);
      if (!s) return undefined;
      const t = now();
      if (remainingMs(s, t) <= 0) {
        sessions.delete(k);
        return undefined;
      }
      const touched = { ...s, lastSeenAt: t };
      sessions.set(k, touched);
      return { id, ...touched };
    },
    async end(id) {
      sessions.delete(digest(id));
    },
  };
}

const sessionKey = (id: string): string => `lgw:portal:session:${digest(id)}`;

function parseStored(json: string | null): Stored | undefined {
  if (!json) return undefined;
  try {
    const v = JSON.parse(json) as Stored;
    if (typeof v.accountId !== 'string' || typeof v.csrf !== 'string' || typeof v.createdAt !== 'number' || typeof v.lastSeenAt !== 'number') return undefined;
    return v;
  } catch {
    return undefined;
  }
}

/**
 * Sessions in Redis, seen by every instance. The record expires with the session (PX = the time
 * left before the idle or absolute limit); the last-seen time is rewritten at most every 15 s.
 */
export function createRedisPortalSessions(redis: RedisClient, now: () => number = Date.now): PortalSessionStore {
  const write = (id: string, s: Stored, t: number): Promise<unknown> => redis.set(sessionKey(id), JSON.stringify(s), 'PX', Math.max(1, remainingMs(s, t)));
  return {
    async create(accountId, email) {
      const t = now();
      const id = newId();
      const stored = fresh(accountId, email, t);
      await write(id, stored, t);
      return { id, ...stored };
    },
    async get(id) {
      if (!VALID_ID.test(id)) return undefined;
      const s = parseStored(await redis.get(sessionKey(id)));
      if (!s) return undefined;
      const t = now();
      if (remainingMs(s, t) <= 0) {
        await redis.del(sessionKey(id));
        return undefined;
      }
      if (t - s.lastSeenAt < TOUCH_EVERY_MS) return { id, ...s };
      const touched = { ...s, lastSeenAt: t };
      await write(id, touched, t);
      return { id, ...touched };
    },
    async end(id) {
      if (VALID_ID.test(id)) await redis.del(sessionKey(id));
    },
  };
}
