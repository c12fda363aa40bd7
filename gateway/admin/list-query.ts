import { ApiError } from '../errors';

/**
 * The query of a list call: `limit` (a whole number, checked by the list) and `cursor`, each at most
 * once; anything else is 400 `invalid_parameter` naming it, as on the public surface.
 */
export function listQuery(url: string): { limit?: number; cursor?: string } {
  const at = url.indexOf('?');
  const params = new URLSearchParams(at < 0 ? '' : url.slice(at + 1));
  const out: { limit?: number; cursor?: string } = {};
  const seen = new Set<string>();
  for (const [name, value] of params) {
    if (seen.has(name)) throw new ApiError('invalid_parameter', { parameter: name }, undefined, `${name}: given more than once`);
    seen.add(name);
    if (name === 'limit') {
      if (!/^[0-9]{1,4}$/.test(value)) throw new ApiError('invalid_parameter', { parameter: 'limit' }, undefined, 'limit: must be a whole number from 1 to 1000');
      out.limit = Number(value);
    } else if (name === 'cursor') {
      if (value === '') throw new ApiError('invalid_parameter', { parameter: 'cursor' }, undefined, 'cursor: empty (leave it out for the first page)');
      out.cursor = value;
    } else {
      throw new ApiError('invalid_parameter', { parameter: name }, undefined, `${name}: unknown parameter (this list takes limit and cursor)`);
    }
  }
  return out;
}
