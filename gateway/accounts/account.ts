// gateway/accounts/: key holders' accounts: the model, stores (Redis, keys-file list, memory twin), paging,
// one-time sign-in links, their audit entries and the /admin/accounts routes.
import { z } from 'zod';
import { ApiError } from '../errors';
import { emailKey } from './email-address';

/**
 * A key holder. `emails` are the identities that may sign in to the portal, in
 * the form email-address.ts compares them (ASCII letters lower-cased, nothing else changed);
 * `billingCustomer` is the billing system's id, free text.
 */
export interface Account {
  readonly id: string;
  readonly name: string;
  readonly emails: readonly string[];
  readonly billingCustomer?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** The key-id alphabet (docs/keys-and-accounts.md): accounts use it too. */
export const ACCOUNT_ID = /^[A-Za-z0-9._-]{1,64}$/;
export const MAX_EMAILS = 10;
export const MAX_NAME = 200;
export const MAX_BILLING_CUSTOMER = 200;
/** An address as forms and identity providers give it: one `@`, no spaces, at most 254 characters. */
const EMAIL = /^[^\s@<>()",;]{1,64}@[^\s@<>()",;]+\.[^\s@<>()",;]+$/;

const Email = z.string().max(254, 'must be at most 254 characters').regex(EMAIL, 'must be an email address, e.g. ops@example.com');
const Emails = z.array(Email).min(1, 'must list at least one address').max(MAX_EMAILS, `must list at most ${MAX_EMAILS} addresses`);
const Name = z.string().trim().min(1, 'must not be empty').max(MAX_NAME, `must be at most ${MAX_NAME} characters`);
const BillingCustomer = z.string().min(1, 'must not be empty').max(MAX_BILLING_CUSTOMER, `must be at most ${MAX_BILLING_CUSTOMER} characters`);

/** The fields of an account as the keys file, the admin API and the export write them. */
export const AccountFields = z.object({
  id: z.string().regex(ACCOUNT_ID, 'must be 1 to 64 characters of A-Z a-z 0-9 . _ -'),
  name: Name,
  emails: Emails,
  billing_customer: BillingCustomer.optional(),
});
export const AccountCreateSchema = AccountFields.strict();
/** A change names the fields it changes; `billing_customer: null` removes it. */
export const AccountPatchSchema = z
  .object({ name: Name.optional(), emails: Emails.optional(), billing_customer: BillingCustomer.nullable().optional() })
  .strict();

export interface AccountCreateInput {
  id: string;
  name: string;
  emails: string[];
  billingCustomer?: string;
}
export interface AccountPatch {
  name?: string;
  emails?: string[];
  billingCustomer?: string | null;
}

/** Each in its compared form (email-address.ts: ASCII letters lower-cased only), duplicates dropped, order kept. */
export function normaliseEmails(emails: readonly string[]): string[] {
  return [...new Set(emails.map(emailKey))];
}

/** The first issue of a zod failure as 400 `invalid_parameter` naming the field. */
function invalid(error: z.ZodError): ApiError {
  const issue = error.issues[0]!;
  const parameter = issue.path.length ? String(issue.path[0]) : 'body';
  const where = issue.path.length > 1 ? `${parameter}[${String(issue.path[1])}]` : parameter;
  return new ApiError('invalid_parameter', { parameter }, undefined, `${where}: ${issue.message}`);
}

/** Checks a new account's fields (camelCase input, as the store takes it); 400 naming the field. */
export function checkAccountInput(input: AccountCreateInput): AccountCreateInput {
  const parsed = AccountCreateSchema.safeParse({
    id: input.id, name: input.name, emails: input.emails, ...(input.billingCustomer !== undefined ? { billing_customer: input.billingCustomer } : {}),
  });
  if (!parsed.success) throw invalid(parsed.error);
  const d = parsed.data;
  return { id: d.id, name: d.name, emails: normaliseEmails(d.emails), ...(d.billing_customer !== undefined ? { billingCustomer: d.billing_customer } : {}) };
}

/** Checks a change (camelCase input); 400 naming the field. */
export function checkAccountPatch(patch: AccountPatch): AccountPatch {
  const raw: Record<string, unknown> = {};
  if (patch.name !== undefined) raw.name = patch.name;
  if (patch.emails !== undefined) raw.emails = patch.emails;
  if (patch.billingCustomer !== undefined) raw.billing_customer = patch.billingCustomer;
  const parsed = AccountPatchSchema.safeParse(raw);
  if (!parsed.success) throw invalid(parsed.error);
  const d = parsed.data;
  return {
    ...(d.name !== undefined ? { name: d.name } : {}),
    ...(d.emails !== undefined ? { emails: normaliseEmails(d.emails) } : {}),
    ...(d.billing_customer !== undefined ? { billingCustomer: d.billing_customer } : {}),
  };
}

/** JSON bodies of the admin API (snake_case) to the store's input. */
export function accountInputFromJson(body: Record<string, unknown>): AccountCreateInput {
  const parsed = AccountCreateSchema.safeParse(body);
  if (!parsed.success) throw invalid(parsed.error);
  const d = parsed.data;
  return { id: d.id, name: d.name, emails: d.emails, ...(d.billing_customer !== undefined ? { billingCustomer: d.billing_customer } : {}) };
}
export function accountPatchFromJson(body: Record<string, unknown>): AccountPatch {
  const parsed = AccountPatchSchema.safeParse(body);
  if (!parsed.success) throw invalid(parsed.error);
  const d = parsed.data;
  return { ...(d.name !== undefined ? { name: d.name } : {}), ...(d.emails !== undefined ? { emails: d.emails } : {}), ...(d.billing_customer !== undefined ? { billingCustomer: d.billing_customer } : {}) };
}

/** What operators see of an account (admin API, CLI, export): snake_case, as the keys file writes it. */
export interface AccountView {
  id: string;
  name: string;
  emails: string[];
  billing_customer?: string;
  created_at: string;
  updated_at: string;
}
export const accountView = (a: Account): AccountView => ({
  id: a.id,
  name: a.name,
  emails: [...a.emails],
  ...(a.billingCustomer !== undefined ? { billing_customer: a.billingCustomer } : {}),
  created_at: a.createdAt,
  updated_at: a.updatedAt,
});

/** The changed fields of an account, for the audit log (absent = null). */
export function accountChanges(before: Account | undefined, after: Account | undefined): Record<string, { before: unknown; after: unknown }> {
  const pick = (a: Account | undefined): Record<string, unknown> =>
    a ? { name: a.name, emails: [...a.emails], billing_customer: a.billingCustomer ?? null } : { name: null, emails: null, billing_customer: null };
  const b = pick(before);
  const c = pick(after);
  const out: Record<string, { before: unknown; after: unknown }> = {};
  for (const field of Object.keys(b)) if (JSON.stringify(b[field]) !== JSON.stringify(c[field])) out[field] = { before: b[field], after: c[field] };
  return out;
}

/** An account with a checked change applied (`billingCustomer: null` removes it), updated now. */
export function applyPatch(before: Account, patch: AccountPatch): Account {
  const { billingCustomer: _b, ...rest } = before;
  const billing = patch.billingCustomer === undefined ? before.billingCustomer : (patch.billingCustomer ?? undefined);
  return {
    ...rest,
    ...(patch.name !== undefined ? { name: patch.name } : {}),
    ...(patch.emails !== undefined ? { emails: patch.emails } : {}),
    ...(billing !== undefined ? { billingCustomer: billing } : {}),
    updatedAt: new Date().toISOString(),
  };
}

export const unknownAccount = (id: string): ApiError => new ApiError('not_found', {}, undefined, `No account with id "${id}".`);
