import { ApiError } from '../errors';
import { unknownId } from './key-input';
import type { StoredKey } from './redis-layout';

/**
 * What a change made for a key's holder expects of the record. It is checked on the record the
 * write is computed from, inside the writer's compare-and-set (key-writer.ts), so nothing can
 * change the record between the check and the write: a change computed from another record is
 * lost to the other writer and checked again on the record that writer left.
 */
export interface KeyExpectation {
  /** The key must (still) be this account's: otherwise 404, as for a key the holder never had. */
  readonly account?: string;
  /** The record's `updated_at` the change was asked from: otherwise `staleVersion` (409). */
  readonly version?: string;
}

/** 409 `conflict`: the key changed since the page asking for the change was shown. */
export class StaleVersion extends ApiError {
  constructor() {
    super('conflict', {}, undefined, 'The key changed since this was asked; nothing was changed.');
  }
}

/** Throws unless `s` is what `expect` says (nothing expected: nothing checked). */
export function checkExpectation(id: string, s: StoredKey, expect: KeyExpectation | undefined): void {
  if (!expect) return;
  if (expect.account !== undefined && s.account !== expect.account) throw unknownId(id);
  if (expect.version !== undefined && s.updated_at !== expect.version) throw new StaleVersion();
}
