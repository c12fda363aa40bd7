/**
 * What of a caller's `tracestate` the gateway continues (records in its spans, exports to the
 * collector, and forwards to the data service and the insights service): OpenTelemetry's own
 * entry, `ot`, and in it only the sub-keys the specification defines for consistent sampling, in
 * their specified shape: `th` (a threshold, 1 to 14 hex digits) and `rv` (a random value, exactly
 * 14 hex digits). Every other vendor's entry is dropped: its value is opaque, so the gateway
 * cannot tell an identifier from a key hidden in it (base64 of the key, its SHA-256, pieces of
 * either), and a caller's header must never carry a secret to the collector. What is kept holds
 * at most 28 hex digits, less than a key or its hash.
 */
const OT_SUBKEYS: ReadonlyArray<readonly [string, RegExp]> = [['th', /^[0-9a-f]{1,14}$/], ['rv', /^[0-9a-f]{14}$/]];
/** The longest header looked at (the W3C limit is 32 members of at most 256 characters each). */
const MAX_HEADER = 8192;

/** The `ot` entry's value reduced to its well-formed `th` and `rv`, or undefined when none is. */
function otValue(value: string): string | undefined {
  const given = new Map<string, string>();
  for (const part of value.split(';')) {
    const colon = part.indexOf(':');
    const name = part.slice(0, colon);
    if (colon > 0 && !given.has(name)) given.set(name, part.slice(colon + 1));
  }
  const kept = OT_SUBKEYS.flatMap(([name, shape]) => {
    const v = given.get(name);
    return v !== undefined && shape.test(v) ? [`${name}:${v}`] : [];
  });
  return kept.length ? kept.join(';') : undefined;
}

/**
 * The `tracestate` to continue from a caller's header (one or several lines), or undefined: only
 * the first `ot` list member, reduced to `th` and `rv` (see above).
 */
export function continuedTraceState(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header.join(',') : header;
  if (text.length > MAX_HEADER) return undefined;
  for (const member of text.split(',')) {
    const eq = member.indexOf('=');
    if (eq < 0 || member.slice(0, eq).trim() !== 'ot') continue;
    const value = otValue(member.slice(eq + 1).trim());
    return value === undefined ? undefined : `ot=${value}`;
  }
  return undefined;
}
