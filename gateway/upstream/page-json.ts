/**
 * The JSON text of a page's listings, taken from the data service's own text when it can be
 * passed on unchanged, so the gateway does not serialise again what it has just parsed (measured
 * on the listing path: see the performance issue). The parsed body is always checked first; the
 * text is reused only when the checks below prove it is exactly the `items` value and that it
 * holds nothing to strip. Otherwise the caller serialises the cleaned items itself.
 */

/** Fields of the data service that never leave the gateway: the withdrawn flag and `_`-prefixed storage fields. */
export const isPrivateField = (field: string): boolean => field === 'withdrawn' || field.charCodeAt(0) === 95; /* _ */

/**
 * Number texts JSON.parse would not give back as written: an exponent (which may overflow to
 * Infinity or underflow to 0), a negative zero, or 16 digits and more (beyond 2^53). Matched
 * after `:`, `,` or `[`, where every number token starts; a match inside a string only costs the slower path.
 */
const NUMBER_REWRITTEN_BY_PARSE = /[:,[]\s*-?\d+(?:\.\d+)?[eE]|[:,[]\s*-0(?:\.0*)?(?![\d.eE])|\d{16}/;

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
 * Proof that it is clean: no listing may carry a private field (`isPrivateField`). In JSON text a
 * key is a quoted string, so the absence of `"withdrawn"` and of `"_` proves no such key exists,
 * provided no key is written with escapes; a text with any `\u` escape is therefore refused too.
 * (A value that merely contains these sequences only costs the slower path.)
 *
 * Numbers go out as the data service wrote them, so a text with a number the parser would rewrite
 * (NUMBER_REWRITTEN_BY_PARSE) takes the slower path too: the listings then mean the same to every client.
 * A key repeated inside one listing is passed on as sent (the gateway reads the last, as JSON.parse
 * does; it checks no listing field but `withdrawn` and private fields, which the text check covers in every repetition).
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
  if (text.includes('"withdrawn"') || text.includes('"_') || text.includes('\\u') || NUMBER_REWRITTEN_BY_PARSE.test(text)) return undefined;
  return text.slice(HEAD.length, text.length - tail.length);
}
