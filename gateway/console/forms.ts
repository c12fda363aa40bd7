import type { Request } from 'express';
import { invalidParameter } from '../http/invalid-parameter';
import { formBody as readFormBody } from '../http/request-bodies';

/** The console's form parser: small forms only (16 KB, 50 fields), never nested, never compressed. */
export const formBody = readFormBody({ limit: '16kb', parameterLimit: 50 });

/** The query of a console request, as given. */
export const queryOf = (req: Request): URLSearchParams => new URL(req.originalUrl, 'http://console').searchParams;

/** A form field as one string ('' when absent; a repeated field is refused). */
export function field(req: Request, name: string): string {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const v = Object.hasOwn(body, name) ? body[name] : undefined;
  if (v === undefined) return '';
  if (typeof v !== 'string') throw invalidParameter(name, 'given more than once');
  return v.trim();
}

export function wholeNumber(name: string, value: string): number | undefined {
  if (value === '') return undefined;
  if (!/^\d{1,15}$/.test(value)) throw invalidParameter(name, 'must be a whole number');
  return Number(value);
}

/** The record fields of the create and change forms, as the key admin's input. */
export function recordInput(req: Request): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const tier = field(req, 'tier');
  if (tier) out.tier = tier;
  // One field for the key's addresses: one entry, or several separated by commas or spaces.
  const address = field(req, 'address');
  if (address) {
    const entries = address.split(/[\s,]+/).filter(Boolean);
    if (entries.length === 1) out.address = entries[0];
    else out.addresses = entries;
  }
  const countries = field(req, 'countries');
  if (countries) out.countries = countries.split(/[\s,]+/).filter(Boolean);
  for (const name of ['per_minute', 'per_day', 'per_month'] as const) {
    const n = wholeNumber(name, field(req, name));
    if (n !== undefined) out[name] = n;
  }
  return out;
}
