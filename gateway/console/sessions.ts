import { randomBytes } from 'node:crypto';

/** A signed-in operator's console session. The token is never kept: its digest is, to notice a rotation. */
export interface Session {
  readonly id: string;
  readonly operatorName: string;
  /** SHA-256 of the token signed in with: a token replaced in ADMIN_TOKENS_FILE ends its sessions. */
  readonly tokenDigest: Buffer;
  /** Sent in a hidden field of every form; a POST without it is refused (CSRF). */
  readonly csrf: string;
  readonly expiresAt: number;
}

export interface SessionStore {
  create(operatorName: string, tokenDigest: Buffer): Session;
  /** The live session of this id, or undefined (unknown, ended or expired). */
  get(id: string): Session | undefined;
  end(id: string): void;
}

/** Live sessions one operator token may hold; signing in once more ends its oldest. */
export const MAX_SESSIONS_PER_TOKEN = 20;

/**
 * Sessions in this process's memory: a restart signs everyone out, and with several instances an
 * operator stays on the one whose admin listener they signed in to (the admin listener is one
 * operator-facing address, normally loopback or behind one proxy). Ids are 32 random bytes.
 * Bounded by construction: at most MAX_SESSIONS_PER_TOKEN per token (so the operator set bounds
 * them all), and every operation is O(1) in the number of sessions: a look-up is one map read, and
 * as every session lives the same `ttlMs`, the map's insertion order is expiry order, so a sweep
 * stops at the first live one.
 */
export function createMemorySessionStore(ttlMs: number, now: () => number = Date.now, perToken = MAX_SESSIONS_PER_TOKEN): SessionStore {
  const sessions = new Map<string, Session>();
  const byToken = new Map<string, string[]>();
  const forget = (session: Session): void => {
    sessions.delete(session.id);
    const digest = session.tokenDigest.toString('hex');
    const ids = byToken.get(digest)?.filter((id) => id !== session.id) ?? [];
    if (ids.length) byToken.set(digest, ids);
    else byToken.delete(digest);
  };
  const sweep = (): void => {
    const t = now();
    for (const s of sessions.values()) {
      if (s.expiresAt > t) break;
      forget(s);
    }
  };
  return {
    create(operatorName, tokenDigest) {
      sweep();
      const digest = tokenDigest.toString('hex');
      const held = byToken.get(digest) ?? [];
      while (held.length >= perToken) forget(sessions.get(held.shift()!)!);
      const session: Session = {
        id: randomBytes(32).toString('base64url'),
        operatorName,
        tokenDigest,
        csrf: randomBytes(32).toString('base64url'),
        expiresAt: now() + ttlMs,
      };
      sessions.set(session.id, session);
      byToken.set(digest, [...(byToken.get(digest) ?? []), session.id]);
      return session;
    },
    get(id) {
      const session = sessions.get(id);
      if (!session) return undefined;
      if (session.expiresAt <= now()) {
        forget(session);
        return undefined;
      }
      return session;
    },
    end(id) {
      const session = sessions.get(id);
      if (session) forget(session);
    },
  };
}
