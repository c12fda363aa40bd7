import type { z } from 'zod';

/** A value stored as JSON, checked against its schema: undefined when absent, not JSON, or not of that shape (never thrown). */
export function parseStoredJson<S extends z.ZodTypeAny>(schema: S, json: string | null): z.infer<S> | undefined {
  if (json === null) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(json));
    return parsed.success ? (parsed.data as z.infer<S>) : undefined;
  } catch {
    return undefined;
  }
}
