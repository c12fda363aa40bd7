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

/** The stored fields of an account (the value written also holds its pending audit entries: gateway/audit/outbox-value.ts). */
export const toStoredAccount = (a: Account): Record<string, unknown> => ({
  id: a.id, name: a.name, emails: a.emails, ...(a.billingCustomer !== undefined ? { billing_customer: a.billingCustomer } : {}), created_at: a.createdAt, updated_at: a.updatedAt,
});

/** The account of a stored JSON, or undefined if it is not one. */
export function parseStoredAccount(json: string | null): Account | undefined {
  const s = parseStoredJson(StoredAccountSchema, json);
  if (!s) return undefined;
  return { id: s.id, name: s.name, emails: s.emails, ...(s.billing_customer !== undefined ? { billingCustomer: s.billing_customer } : {}), createdAt: s.created_at, updatedAt: s.updated_at };
}
