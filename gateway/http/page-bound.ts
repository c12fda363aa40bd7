/**
 * The one page size of every admin-side list (keys, accounts, requests, dead letters; the CLI's too):
 * `limit` from 1 to 1000, 100 when not given. Its own module, importing nothing, so the CLI's help
 * loads nothing else.
 */
export const PAGE = { default: 100, min: 1, max: 1000 } as const;
