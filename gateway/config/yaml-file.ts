import { readFileSync, statSync } from 'node:fs';
import { CORE_SCHEMA, load } from 'js-yaml';
import { z } from 'zod';
import { ConfigError, formatIssuePath } from './config-error';
import { MAX_YAML_BYTES, yamlBoundsIssue } from './yaml-bounds';

/** The file's text; a file over MAX_YAML_BYTES is refused before it is read. */
function readBoundedText(file: string): string {
  try {
    const { size } = statSync(file);
    if (size > MAX_YAML_BYTES) throw new ConfigError(`${file}: is ${size} bytes, larger than the ${MAX_YAML_BYTES} bytes a YAML file may be`);
    return readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/**
 * Reads a YAML file and validates it with `schema`. Every failure becomes one line naming the
 * file, the entry (`describeEntry` turns the issue path into e.g. `keys[2] (id demo-x)`) and the field.
 * The file's size and the document's expanded size are bounded first (yaml-bounds.ts).
 */
export function readYamlFile<S extends z.ZodTypeAny>(
  file: string,
  schema: S,
  describeEntry: (raw: unknown, path: ReadonlyArray<string | number>) => string = (_raw, path) => formatIssuePath(path),
  /**
   * An optional fast check for large files: when it says the parsed document is exactly what the
   * schema accepts, the schema is not run (it is for its error messages; it stays the rule).
   */
  wellFormed?: (raw: unknown) => boolean,
): z.infer<S> {
  const text = readBoundedText(file);
  let raw: unknown;
  try {
    // js-yaml: ~10x faster than the `yaml` package on a 100,000-key file. The core schema reads no
    // timestamps (dates stay strings, as the schemas expect); duplicate keys are an error.
    raw = load(text, { schema: CORE_SCHEMA, filename: file });
  } catch (err) {
    const mark = (err as { mark?: { line: number }; reason?: string }).mark;
    const reason = (err as { reason?: string }).reason ?? (err as Error).message.split('\n')[0];
    throw new ConfigError(`${file}: not valid YAML${mark ? ` (line ${mark.line + 1})` : ''}: ${reason}`);
  }
  // Only aliases can make a document larger than its text: without a `*`, nothing to measure.
  const bounds = text.includes('*') ? yamlBoundsIssue(raw, Buffer.byteLength(text)) : undefined;
  if (bounds) throw new ConfigError(`${file}: refused: the document ${bounds}`);
  if (wellFormed?.(raw)) return raw as z.infer<S>;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length ? describeEntry(raw, issue.path) : '(top level)';
    throw new ConfigError(`${file}: ${field}: ${issue.message}`);
  }
  return parsed.data;
}
