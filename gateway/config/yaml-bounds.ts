/**
 * The bounds of every YAML document the gateway and the CLI read (gateway config, operator
 * tokens, keys files, in the gateway, its reader process, `keys validate` and `keys import`):
 * checked in readYamlFile before anything looks at the document, so a hostile file costs a bounded
 * time and memory and is refused with one line.
 *
 * YAML aliases (`*name`) let a small text stand for a huge document: one anchored list of 150,000
 * items named by 3,300 entries is 495 million items to whoever walks it. The parser shares the
 * aliased value (cheap); every reader after it (schema, checks, copies) walks it expanded. So the
 * document is measured expanded, as the readers will see it.
 */

/** The largest YAML file read: far above a 100,000-key keys file (~20 MB). */
export const MAX_YAML_BYTES = 64 * 1024 * 1024;
/** The most aliases a document may use (each use of `*name` of a list or map counts once). */
export const MAX_YAML_ALIASES = 1_000_000;
/**
 * The most values (lists, maps and scalars, aliases expanded) a document may hold: twice its size
 * in bytes plus a margin. Without aliases a value takes at least a byte of text, so only aliases can
 * exceed this; a keys file naming one shared country list from every entry stays well within it.
 */
export const maxExpandedValues = (bytes: number): number => 2 * bytes + 100_000;

/** Why a document is refused, or undefined when it is within the bounds. */
export function yamlBoundsIssue(doc: unknown, bytes: number): string | undefined {
  const budget = maxExpandedValues(bytes);
  let values = 0;
  let aliases = 0;
  const seen = new Set<object>();
  // Depth-first with an explicit stack: no recursion limit, and it stops at the first bound crossed.
  const stack: unknown[] = [doc];
  while (stack.length) {
    const value = stack.pop();
    if (++values > budget) return `expands to more than ${budget} values (YAML aliases: each *name counts its whole value again)`;
    if (typeof value !== 'object' || value === null) continue;
    if (seen.has(value)) {
      if (++aliases > MAX_YAML_ALIASES) return `uses more than ${MAX_YAML_ALIASES} YAML aliases`;
    } else {
      seen.add(value);
    }
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
    } else {
      for (const key in value) stack.push((value as Record<string, unknown>)[key]);
    }
  }
  return undefined;
}
