/** The entries of T that may be undefined, made optional (exactOptionalPropertyTypes: absent, never undefined). */
export type Defined<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & { [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined> };

/**
 * The entries of `entries` whose value is not undefined: `...defined({ redis, holders })` for
 * `...(redis ? { redis } : {}), ...(holders ? { holders } : {})`, where optional fields must be
 * absent rather than undefined.
 */
export function defined<T extends Record<string, unknown>>(entries: T): Defined<T> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(entries)) if (value !== undefined) out[name] = value;
  return out as Defined<T>;
}
