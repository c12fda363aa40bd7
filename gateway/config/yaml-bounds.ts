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

const childrenOf = (value: object): unknown[] => (Array.isArray(value) ? value : Object.values(value));

/**
 * Why a document is refused, or undefined when it is within the bounds. Each distinct list or map
 * is visited once and its expanded size remembered, so an alias costs one addition however large
 * its value: the measure is linear in the parsed document, not in its expansion.
 */
export function yamlBoundsIssue(doc: unknown, bytes: number): string | undefined {
  if (typeof doc !== 'object' || doc === null) return undefined;
  const budget = maxExpandedValues(bytes);
  const sizes = new Map<object, number>();
  const seen = new Set<object>([doc]);
  /** Lists and maps being measured: the path from the document down to the one on top. */
  const open = new Set<object>();
  let aliases = 0;
  // Post-order with an explicit stack (no recursion limit): a node's size once its children's are known.
  const stack: Array<{ node: object; expanded: boolean }> = [{ node: doc, expanded: false }];
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    if (!top.expanded && sizes.has(top.node)) {
      stack.pop(); // measured meanwhile (an alias of it came first)
    } else if (!top.expanded) {
      top.expanded = true;
      open.add(top.node);
      for (const child of childrenOf(top.node)) {
        if (typeof child !== 'object' || child === null) continue;
        if (seen.has(child)) {
          if (open.has(child)) return 'contains itself through an alias';
          if (++aliases > MAX_YAML_ALIASES) return `uses more than ${MAX_YAML_ALIASES} YAML aliases`;
          if (sizes.has(child)) continue;
        }
        seen.add(child);
        stack.push({ node: child, expanded: false });
      }
    } else {
      stack.pop();
      open.delete(top.node);
      let size = 1;
      for (const child of childrenOf(top.node)) size += typeof child === 'object' && child !== null ? sizes.get(child)! : 1;
      if (size > budget) return `expands to more than ${budget} values (YAML aliases: each *name counts its whole value again)`;
      sizes.set(top.node, size);
    }
  }
  return undefined;
}
