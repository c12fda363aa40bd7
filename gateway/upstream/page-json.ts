/**
 * The JSON text of a page's listings, taken from the data service's own text when it can be
 * passed on unchanged, so the gateway does not serialise again what it has just parsed (measured
 * on the listing path: see the performance issue). The parsed body is always checked first; the
 * text is reused only when the checks below prove it is exactly the `items` value and that it
 * holds nothing to strip. Otherwise the caller serialises the cleaned items itself.
 */

const HEAD = '{"items":';
const NEXT_AFTER_KEY = '"next_after"';
const ITEMS_KEY = '"items"';

/**
 * The raw text of `body.items` within `text`, or undefined when it cannot be proven to be that
 * and clean. `body` is `JSON.parse(text)`, already checked to be `{items: array, next_after: string | null}`.
 *
 * Proof that the slice is the items value: the text starts with `{"items":` and ends with
 * `,"next_after":<next_after as JSON.stringify writes it>}`; the body has exactly these two keys;
 * and each key occurs once in the whole text, so no duplicate key was collapsed by the parser and
 * the tail is the second member. What lies between is therefore the first member's value.
 *
 * Proof that it is clean: no listing may carry `withdrawn` or a `_`-prefixed field. In JSON text a
 * key is a quoted string, so the absence of `"withdrawn"` and of `"_` proves no such key exists,
 * provided no key is written with escapes; a text with any `\u` escape is therefore refused too.
 * (A value that merely contains these sequences only costs the slower path.)
 */
export function passThroughItems(text: string, body: { readonly items: unknown[]; readonly next_after: string | null }): string | undefined {
  if (!text.startsWith(HEAD)) return undefined;
  const tail = `,${NEXT_AFTER_KEY}:${JSON.stringify(body.next_after)}}`;
  if (!text.endsWith(tail) || text.length - tail.length <= HEAD.length) return undefined;
  let keys = 0;
  for (const _key in body) keys++;
  if (keys !== 2) return undefined;
  if (text.indexOf(ITEMS_KEY, 2) !== -1) return undefined; // the only "items" is the one at position 1
  const nextAfterAt = text.length - tail.length + 1;
  if (text.indexOf(NEXT_AFTER_KEY) !== nextAfterAt) return undefined;
  if (text.includes('"withdrawn"') || text.includes('"_') || text.includes('\\u')) return undefined;
  return text.slice(HEAD.length, text.length - tail.length);
}
