/**
 * The dead letters' list pages like every admin list (docs/guarantees.md): `limit` 1..1000 and
 * `cursor`, `next_cursor` null on the last page; oldest failure first; a walk meets every letter
 * once, also when letters are re-sent (removed) between two pages.
 */
import { ApiError } from '../../gateway/errors';
import type { DeadLetter } from '../../gateway/webhooks/dead-letter';
import { deadLetterPage } from '../../gateway/webhooks/dead-letter-page';

const letter = (id: string, failedAt: string): DeadLetter => ({
  id, type: 'key.created', attempts: 9, last_error: 'HTTP 500', failed_at: failedAt, event: { type: 'key.created', timestamp: failedAt, data: { key_id: id } },
});
// 25 letters, two of them failing in the same millisecond (the id decides), given out of order.
const all = Array.from({ length: 25 }, (_, i) => letter(`msg_${String(i).padStart(2, '0')}`, new Date(Date.UTC(2026, 10, 1, 0, 0, i === 7 ? 6 : i)).toISOString())).reverse();

function walk(limit: number, source: () => readonly DeadLetter[]): string[] {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = deadLetterPage(source(), { limit, ...(cursor ? { cursor } : {}) });
    expect(page.events.length).toBeLessThanOrEqual(limit);
    seen.push(...page.events.map((d) => d.id));
    if (page.next_cursor === null) return seen;
    cursor = page.next_cursor;
  }
  throw new Error('the walk did not end');
}

describe('dead letter pages', () => {
  it('walks every letter once, oldest failure first, ties by id', () => {
    const expected = [...all].sort((a, b) => (a.failed_at + a.id < b.failed_at + b.id ? -1 : 1)).map((d) => d.id);
    expect(walk(10, () => all)).toEqual(expected);
    expect(walk(1, () => all)).toEqual(expected);
    expect(walk(1000, () => all)).toEqual(expected);
    expect(deadLetterPage(all, {}).events).toHaveLength(25); // default 100
    expect(deadLetterPage([], {})).toEqual({ events: [], next_cursor: null });
  });

  it('neither repeats nor skips a letter when others are re-sent between pages', () => {
    let current = [...all];
    const first = deadLetterPage(current, { limit: 10 });
    current = current.filter((d) => d.id !== first.events[0]!.id && d.id !== 'msg_15'); // re-sent meanwhile
    const rest = walk(10, () => current).filter((id) => id > first.events[9]!.id);
    const second = deadLetterPage(current, { limit: 100, cursor: first.next_cursor! });
    expect(second.events.map((d) => d.id)).toEqual(rest);
    expect(second.events.map((d) => d.id)).not.toContain('msg_15');
    expect(new Set([...first.events.map((d) => d.id), ...second.events.map((d) => d.id)]).size).toBe(24);
  });

  it.each([0, 1001])('refuses limit %d with invalid_parameter', (limit) => {
    expect(() => deadLetterPage(all, { limit })).toThrow(ApiError);
  });

  it.each(['x', 'AB', Buffer.from('no separator').toString('base64url')])('refuses cursor %s with invalid_parameter', (cursor) => {
    try {
      deadLetterPage(all, { cursor });
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe('invalid_parameter');
    }
  });
});
