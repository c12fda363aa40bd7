/** Page size of key lists (CONTRACT part 7): default and bounds. Its own module so the CLI's help loads nothing else. */
export const PAGE = { default: 100, min: 1, max: 1000 } as const;
