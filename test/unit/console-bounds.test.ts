/**
 * Console reads and sessions are bounded (issue 23 finding 5): a keys page looks through at most
 * KEYS_SCAN_BUDGET records however many the store holds, asks the store for pages of at most
 * KEYS_PER_PAGE, and never skips a match between pages; sessions are bounded per token.
 */
import type { ConsoleStore } from '../../gateway/console/console-store';
import { fileConsoleStore } from '../../gateway/console/file-console-store';
import { findKeys, KEYS_SCAN_BUDGET } from '../../gateway/console/keys-search';
import { KEYS_PER_PAGE, type KeysFilter } from '../../gateway/console/pages/keys-list';
import { createMemorySessionStore, MAX_SESSIONS_PER_TOKEN } from '../../gateway/console/sessions';
import type { KeyView } from '../../gateway/keys/key-admin';
import type { FileKey } from '../../gateway/keys/keys-file';

const view = (i: number): KeyView => ({
  id: `key-${String(i).padStart(6, '0')}`, tier: i % 100 === 0 ? 'advanced' : 'standard', countries: ['GB'], addresses: ['127.0.0.1'], status: 'active',
  limits: { per_minute: 1, per_day: 1, per_month: 1 }, created_at: '', updated_at: '',
} as unknown as KeyView);

/** A store of `count` records that counts what it is asked for (an offset cursor, as a pager's). */
function countingStore(count: number) {
  const asked: number[] = [];
  let read = 0;
  const store = {
    source: 'a counting store',
    async page({ limit, cursor }: { limit: number; cursor?: string }) {
      asked.push(limit);
      const from = cursor ? Number(cursor) : 0;
      const keys = Array.from({ length: Math.max(0, Math.min(limit, count - from)) }, (_, j) => view(from + j));
      read += keys.length;
      return { keys, next_cursor: from + keys.length < count ? String(from + keys.length) : null };
    },
  } as unknown as ConsoleStore;
  return { store, asked, read: () => read };
}
const filter = (f: Partial<KeysFilter> = {}): KeysFilter => ({ q: '', state: '', tier: '', country: '', ...f });

describe('the console keys page', () => {
  it('reads one page of records at 50,000 keys, not all of them', async () => {
    const s = countingStore(50_000);
    const found = await findKeys(s.store, filter(), undefined);
    expect(found.keys).toHaveLength(KEYS_PER_PAGE);
    expect(s.read()).toBe(KEYS_PER_PAGE);
    expect(found.next_cursor).toBe(String(KEYS_PER_PAGE));
  });

  it('with a filter matching nothing, stops at its bound and says where to go on', async () => {
    const s = countingStore(50_000);
    const found = await findKeys(s.store, filter({ q: 'nothing-matches' }), undefined);
    expect(found.keys).toEqual([]);
    expect(s.read()).toBe(KEYS_SCAN_BUDGET);
    expect(Math.max(...s.asked)).toBeLessThanOrEqual(KEYS_PER_PAGE);
    expect(found.next_cursor).toBe(String(KEYS_SCAN_BUDGET));
  });

  it('walks every match once across pages (a sparse filter)', async () => {
    const s = countingStore(12_000);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const found = await findKeys(s.store, filter({ tier: 'advanced' }), cursor);
      seen.push(...found.keys.map((k) => k.id));
      if (found.next_cursor === null) break;
      cursor = found.next_cursor;
    }
    expect(seen).toEqual(Array.from({ length: 120 }, (_, i) => view(i * 100).id));
  });

  it('pages the keys file by id, finding the page by its cursor', async () => {
    const keys = Array.from({ length: 120 }, (_, i) => ({ record: { id: view(119 - i).id, tier: 'standard', countries: ['GB'], addressList: ['127.0.0.1'], status: 'active', limits: { perMinute: 1, perDay: 1, perMonth: 1 } } })) as unknown as FileKey[];
    const store = fileConsoleStore({ file: 'k.yaml', keys: () => keys, counters: {} as never, audit: { read: async () => ({ entries: [], next_cursor: null }) } });
    const first = await store.page({ limit: 50 });
    expect(first.keys.map((k) => k.id)).toEqual(Array.from({ length: 50 }, (_, i) => view(i).id));
    const third = await store.page({ limit: 50, cursor: (await store.page({ limit: 50, cursor: first.next_cursor! })).next_cursor! });
    expect(third.keys.map((k) => k.id)).toEqual(Array.from({ length: 20 }, (_, i) => view(100 + i).id));
    expect(third.next_cursor).toBeNull();
    await expect(store.page({ limit: 50, cursor: '!!' })).rejects.toMatchObject({ code: 'invalid_parameter' });
  });
});

describe('console sessions', () => {
  it('hold at most MAX_SESSIONS_PER_TOKEN per token: one more ends the oldest, other tokens untouched', () => {
    const store = createMemorySessionStore(60_000);
    const token = Buffer.alloc(32, 1);
    const other = store.create('bob', Buffer.alloc(32, 2));
    const made = Array.from({ length: MAX_SESSIONS_PER_TOKEN + 5 }, () => store.create('ada', token));
    expect(made.slice(0, 5).map((s) => store.get(s.id))).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(made.slice(5).every((s) => store.get(s.id) === s)).toBe(true);
    expect(store.get(other.id)).toBe(other);
  });

  it('expire in order, and an ended session frees its place', () => {
    let now = 0;
    const store = createMemorySessionStore(1_000, () => now, 2);
    const token = Buffer.alloc(32, 3);
    const a = store.create('ada', token);
    now = 500;
    const b = store.create('ada', token);
    now = 1_000;
    expect(store.get(a.id)).toBeUndefined();
    expect(store.get(b.id)).toBe(b);
    store.end(b.id);
    const c = store.create('ada', token);
    const d = store.create('ada', token);
    expect([store.get(c.id), store.get(d.id)]).toEqual([c, d]);
  });
});
