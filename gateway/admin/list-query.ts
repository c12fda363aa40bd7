import { ApiError } from '../errors';
import { queryParams } from '../usage/usage-query';

/**
 * The query of a list call: `limit` (a whole number, checked by the list) and `cursor`, each at most
 * once; anything else is 400 `invalid_parameter` naming it, as on the public surface.
 */
export function listQuery(url: string): { limit?: number; cursor?: string } {
  const at = url.indexOf('?');
  const { limit, cursor } = queryParams(at < 0 ? '' : url.slice(at + 1), ['limit', 'cursor']);
  const out: { limit?: number; cursor?: string } = {};
  if (limit !== undefined) {
    if (!/^[0-9]{1,4}$/.test(limit)) throw new ApiError('invalid_parameter', { parameter: 'limit' }, undefined, 'limit: must be a whole number from 1 to 1000');
    out.limit = Number(limit);
  }
  if (cursor !== undefined) {
    if (cursor === '') throw new ApiError('invalid_parameter', { parameter: 'cursor' }, undefined, 'cursor: empty (leave it out for the first page)');
    out.cursor = cursor;
  }
  return out;
}
