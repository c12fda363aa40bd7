/**
 * A configuration problem found at start-up. Its message is the one line the operator sees:
 * the source (env variable or file), the entry and the field.
 */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Formats a zod issue path like `keys[2].limits.per_day`. */
export function formatIssuePath(path: ReadonlyArray<string | number>): string {
  return path.reduce<string>((out, part) => (typeof part === 'number' ? `${out}[${part}]` : out ? `${out}.${part}` : part), '');
}
