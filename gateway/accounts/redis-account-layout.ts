import { z } from 'zod';
import { parseStoredJson } from '../validation/stored-json';
import type { Account } from './account';

/** An account as stored in Redis (`lgw:account:<id>`, see gateway/keys/redis-layout.ts): JSON, snake_case. */
const StoredAccountSchema = z.object({
  id: z.string(),
  name: z.string(),
  emails: z.array(z.string()),
  billing_customer: z.string().optional(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const toStoredJson = (a: Account): string =>
  JSON.stringify({
    id: a.id, name: a.name, emails: a.emails, ...(a.billingCustomer !== undefined ? { billing_customer: a.billingCustomer } : {}), created_at: a.createdAt, updated_at: a.updatedAt,
  });

/** The account of a stored JSON, or undefined if it is not one. */
export function parseStoredAccount(json: string | null): Account | undefined {
  const s = parseStoredJson(StoredAccountSchema, json);
  if (!s) return undefined;
  return { id: s.id, name: s.name, emails: s.emails, ...(s.billing_customer !== undefined ? { billingCustomer: s.billing_customer } : {}), createdAt: s.created_at, updatedAt: s.updated_at };
}

/**
 * Sets KEYS[1] to ARGV[2] (deletes it when ARGV[2] is empty) only if it still holds ARGV[1] (empty:
 * absent). One key per call, so it runs on any topology.
 */
export const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if (current or '') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
return 1
`;
