import { createHash, randomBytes } from 'node:crypto';
import { invalidParameter } from '../http/invalid-parameter';
import type { RedisClient } from '../redis/connect';

/**
 * One-time sign-in links (docs/portal.md): `keys account link ID` issues a token; the portal
 * redeems it once, on any instance, until it expires. Only the token's SHA-256 is stored.
 */
export interface LinkTokens {
  /** A new token for the account, valid `minutes` (1..60; default 15). */
  issue(accountId: string, minutes?: number): Promise<string>;
  /** The account the token was issued for, once; undefined when unknown, used or expired. */
  redeem(token: string): Promise<string | undefined>;
}

export const LINK_MINUTES = { default: 15, min: 1, max: 60 } as const;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const hashOf = (token: string): string => createHash('sha256').update(token).digest('hex');
export const linkTokenKey = (hash: string): string => `lgw:portal:link:${hash}`;

function checkMinutes(minutes: number): number {
  if (!Number.isInteger(minutes) || minutes < LINK_MINUTES.min || minutes > LINK_MINUTES.max) {
    throw invalidParameter('minutes', `must be a whole number from ${LINK_MINUTES.min} to ${LINK_MINUTES.max}`);
  }
  return minutes;
}
/** 32 random bytes, base64url (43 characters). */
const newToken = (): string => randomBytes(32).toString('base64url');

/** In Redis with a TTL; redeemed with GETDEL, so one instance wins. */
export function createRedisLinkTokens(redis: RedisClient): LinkTokens {
  return {
    async issue(accountId, minutes = LINK_MINUTES.default) {
      const token = newToken();
      await redis.set(linkTokenKey(hashOf(token)), accountId, 'EX', checkMinutes(minutes) * 60);
      return token;
    },
    async redeem(token) {
      if (!TOKEN.test(token)) return undefined;
      return (await redis.getdel(linkTokenKey(hashOf(token)))) ?? undefined;
    },
  };
}

/** The twin in this process (tests, the embedded demo). */
export function createMemoryLinkTokens(now: () => number = Date.now): LinkTokens {
  const tokens = new Map<string, { accountId: string; expiresAt: number }>();
  return {
    async issue(accountId, minutes = LINK_MINUTES.default) {
      const token = newToken();
      tokens.set(hashOf(token), { accountId, expiresAt: now() + checkMinutes(minutes) * 60_000 });
      for (const [hash, t] of tokens) if (t.expiresAt <= now()) tokens.delete(hash);
      return token;
    },
    async redeem(token) {
      if (!TOKEN.test(token)) return undefined;
      const hash = hashOf(token);
      const found = tokens.get(hash);
      tokens.delete(hash);
      return found && found.expiresAt > now() ? found.accountId : undefined;
    },
  };
}
