import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod';
import { ConfigError, formatIssuePath } from './config-error';

/**
 * Reads a YAML file and validates it with `schema`. Every failure becomes one line naming the
 * file, the entry (`describeEntry` turns the issue path into e.g. `keys[2] (id demo-x)`) and the field.
 */
export function readYamlFile<S extends z.ZodTypeAny>(
  file: string,
  schema: S,
  describeEntry: (raw: unknown, path: ReadonlyArray<string | number>) => string = (_raw, path) => formatIssuePath(path),
): z.infer<S> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let raw: unknown;
  try {
    raw = parse(text, { prettyErrors: false, uniqueKeys: true });
  } catch (err) {
    const line = (err as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    throw new ConfigError(`${file}: not valid YAML${line ? ` (line ${line})` : ''}: ${(err as Error).message.split('\n')[0]}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length ? describeEntry(raw, issue.path) : '(top level)';
    throw new ConfigError(`${file}: ${field}: ${issue.message}`);
  }
  return parsed.data;
}
