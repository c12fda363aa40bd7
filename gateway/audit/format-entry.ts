import { fieldSafe, safeJson } from '../output/safe-text';
import type { AuditEntry } from './audit-entry';

/** A value as one safe piece of a line: operator-set text never carries a control or bidi character out. */
const show = (v: unknown): string => (v === null ? '—' : typeof v === 'string' ? fieldSafe(v) : safeJson(v));

/** One field change as people read it: `status: active → paused`. */
export const formatChanges = (entry: AuditEntry): string[] =>
  Object.entries(entry.changes).map(([field, c]) => `${fieldSafe(field)}: ${show(c.before)} → ${show(c.after)}`);

/** One line per entry, for the CLI: time, actor (channel), action, key, changes. */
export function formatEntryLine(entry: AuditEntry): string {
  const changes = formatChanges(entry);
  return `${fieldSafe(entry.time)}  ${fieldSafe(entry.actor)} (${fieldSafe(entry.channel)})  ${fieldSafe(entry.action)} ${fieldSafe(entry.key_id)}${changes.length ? `  ${changes.join('; ')}` : ''}`;
}
