import { ApiError } from '../errors';

/** The raw query string of a request URL ('' when it has none). */
export function rawQueryOf(url: string): string {
  const at = url.indexOf('?');
  return at < 0 ? '' : url.slice(at + 1);
}

/**
 * The query parameters of an admin-side request, refusing unknown and repeated ones with 400
 * `invalid_parameter` naming the parameter (the public /v1 surface has its own, validation/query.ts).
 */
export function queryParams(rawQuery: string, allowed: readonly string[]): Record<string, string> {
  const out = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (!allowed.includes(name)) throw new ApiError('invalid_parameter', { parameter: name }, undefined, `Unknown parameter "${name}"; this path takes ${allowed.join(', ')}.`);
    if (out.has(name)) throw new ApiError('invalid_parameter', { parameter: name }, undefined, `The parameter "${name}" is repeated.`);
    out.set(name, value);
  }
  return Object.fromEntries(out);
}
