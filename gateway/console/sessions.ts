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

/**
 * Sessions in this process's memory: a restart signs everyone out, and with several instances an
 * operator stays on the one whose admin listener they signed in to (the admin listener is one
 * operator-facing address, normally loopback or behind one proxy). Ids are 32 random bytes.
 * Expired sessions are swept on each `create`, so the map cannot grow without bound.
 */
export function createMemorySessionStore(ttlMs: number, now: () => number = Date.now): SessionStore {
  const sessions = new Map<string, Session>();
  const sweep = (): void => {
    const t = now();
    for (const [id, s] of sessions) if (s.expiresAt <= t) sessions.delete(id);
  };
  return {
    create(operatorName, tokenDigest) {
      sweep();
      const session: Session = {
        id: randomBytes(32).toString('base64url'),
        operatorName,
        tokenDigest,
        csrf: randomBytes(32).toString('base64url'),
        expiresAt: now() + ttlMs,
      };
      sessions.set(session.id, session);
      return session;
    },
    get(id) {
      const session = sessions.get(id);
      if (!session) return undefined;
      if (session.expiresAt <= now()) {
        sessions.delete(id);
        return undefined;
      }
      return session;
    },
    end(id) {
      sessions.delete(id);
    },
  };
}
