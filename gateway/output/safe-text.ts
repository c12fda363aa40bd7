// gateway/output/: one output rule for terminals and files: control and bidi characters escaped,
// CSV cells neutralised.
/**
 * One output rule for terminals and files (issue 23): text an operator set (a note, a pause reason,
 * an id, an actor) never reaches a terminal, a log reader or a spreadsheet as instructions.
 * - Terminals: C0 controls, DEL, C1 controls and the bidirectional overrides and isolates are
 *   written as `\uXXXX` escapes (valid inside JSON strings too, so JSON output keeps its meaning).
 * - CSV: a cell starting with `=`, `+`, `-`, `@`, tab or carriage return is prefixed with `'`, so a
 *   spreadsheet shows it as text rather than running it as a formula; then quoted when needed.
 */

/** Everything a terminal may act on, except newline, tab and a CR ending a line (CSV's CRLF): whole outputs keep their lines. */
const TERMINAL_UNSAFE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g;
/** The same and newline and tab: one field must stay on its line. */
const FIELD_UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const escape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** A whole output (several lines) made safe for a terminal: lines and tabs kept, every other control escaped. */
export const terminalSafe = (text: string): string => text.replace(TERMINAL_UNSAFE, escape);

/** One operator-set value made safe to print inside a line: newlines and tabs escaped too. */
export const fieldSafe = (text: string): string => text.replace(FIELD_UNSAFE, escape);

/** JSON text with no raw control, DEL, C1 or bidi character (JSON.stringify leaves the last three raw). */
export const safeJson = (value: unknown, space?: number): string => terminalSafe(JSON.stringify(value, null, space));

/** One CSV cell: neutralised against formula injection, quoted when it holds a quote, comma or line break. */
export function csvCell(value: string): string {
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
