import type { KeyView } from '../keys/key-admin';
import type { ConsoleStore } from './console-store';
import { KEYS_PER_PAGE, type KeysFilter } from './pages/keys-list';

/** Records one keys page may look through to fill itself when a filter matches few: the bound of a view. */
export const KEYS_SCAN_BUDGET = 1_000;

const matches = (f: KeysFilter) => (k: KeyView): boolean =>
  (!f.q || k.id.toLowerCase().includes(f.q.toLowerCase()))
  && (!f.state || k.status === f.state)
  && (!f.tier || k.tier === f.tier)
  && (!f.country || k.countries.includes(f.country));

export interface KeysFound {
  keys: KeyView[];
  /** Where the next page starts; null when the store has no more records. */
  next_cursor: string | null;
  /** How many records were looked through (at most KEYS_SCAN_BUDGET). */
  scanned: number;
}

/**
 * Up to KEYS_PER_PAGE records matching the filter, from `cursor` on, looking through at most
 * KEYS_SCAN_BUDGET records, a store page at a time: a view never reads every record, whatever the
 * store holds. Each store page asks for no more records than are still missing, so the cursor
 * returned never skips a match.
 */
export async function findKeys(store: ConsoleStore, filter: KeysFilter, cursor: string | undefined): Promise<KeysFound> {
  const keep = matches(filter);
  const keys: KeyView[] = [];
  let next: string | null = cursor ?? null;
  let scanned = 0;
  let first = true;
  while (keys.length < KEYS_PER_PAGE && scanned < KEYS_SCAN_BUDGET && (first || next !== null)) {
    first = false;
    const limit = Math.min(KEYS_PER_PAGE - keys.length, KEYS_SCAN_BUDGET - scanned);
    const page = await store.page({ limit, ...(next !== null ? { cursor: next } : {}) });
    scanned += page.keys.length;
    keys.push(...page.keys.filter(keep));
    next = page.next_cursor;
    if (page.keys.length === 0) break;
  }
  return { keys, next_cursor: next, scanned };
}
