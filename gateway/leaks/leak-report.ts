import { verify } from 'node:crypto';
import { z } from 'zod';
import type { GithubKeySource } from './github-keys';

/** A report's body at most (GitHub sends far less); more is refused before anything is verified. */
export const MAX_REPORT_BYTES = 1024 * 1024;
/** Tokens in one report at most. */
export const MAX_REPORT_TOKENS = 1000;
const MAX_TOKEN_LENGTH = 4096;

export const SIGNATURE_HEADER = 'github-public-key-signature';
export const IDENTIFIER_HEADER = 'github-public-key-identifier';

const ReportSchema = z
  .array(
    z.object({
      token: z.string().min(1).max(MAX_TOKEN_LENGTH),
      type: z.string().max(200),
      url: z.string().max(4096).optional(),
      source: z.string().max(200).optional(),
    }),
  )
  .max(MAX_REPORT_TOKENS);

/** One reported match. */
export type ReportedToken = z.infer<typeof ReportSchema>[number];

/** Why a report is refused (400), for the answer and the log line: never a token. */
export type Refusal = 'too_large' | 'too_many' | 'no_signature' | 'unknown_key' | 'bad_signature' | 'not_json' | 'not_a_report';

export type ReportCheck =
  | { readonly kind: 'report'; readonly tokens: readonly ReportedToken[] }
  | { readonly kind: 'refused'; readonly why: Refusal }
  /** The key list could not be read when it was needed (503: GitHub sends the report again). */
  | { readonly kind: 'unavailable' };

const header = (headers: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const value = headers[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
};

/**
 * Checks a report as GitHub sends it: the raw body's ECDSA P-256 / SHA-256 signature (base64 of
 * DER) by the key the identifier names, before anything in the body is read; then the body as a
 * list of at most MAX_REPORT_TOKENS `{token, type, url, source}`.
 */
export async function checkReport(body: Buffer, headers: Record<string, string | string[] | undefined>, keys: GithubKeySource): Promise<ReportCheck> {
  if (body.length > MAX_REPORT_BYTES) return { kind: 'refused', why: 'too_large' };
  const identifier = header(headers, IDENTIFIER_HEADER);
  const signature = header(headers, SIGNATURE_HEADER);
  if (!identifier || !signature || identifier.length > 256 || signature.length > 1024) return { kind: 'refused', why: 'no_signature' };
  const found = await keys.find(identifier);
  if (found.kind === 'unavailable') return { kind: 'unavailable' };
  if (found.kind === 'unknown') return { kind: 'refused', why: 'unknown_key' };
  let valid = false;
  try {
    valid = verify('sha256', body, { key: found.key, dsaEncoding: 'der' }, Buffer.from(signature, 'base64'));
  } catch {
    valid = false;
  }
  if (!valid) return { kind: 'refused', why: 'bad_signature' };
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return { kind: 'refused', why: 'not_json' };
  }
  if (Array.isArray(json) && json.length > MAX_REPORT_TOKENS) return { kind: 'refused', why: 'too_many' };
  const parsed = ReportSchema.safeParse(json);
  return parsed.success ? { kind: 'report', tokens: parsed.data } : { kind: 'refused', why: 'not_a_report' };
}
