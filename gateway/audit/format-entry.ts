import type { AuditEntry } from './audit-entry';

const show = (v: unknown): string => (v === null ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

/** One field change as people read it: `status: active → paused`. */
export const formatChanges = (entry: AuditEntry): string[] =>
  Object.entries(entry.changes).map(([field, c]) => `${field}: ${show(c.before)} → ${show(c.after)}`);

/** One line per entry, for the CLI: time, actor (channel), action, key, changes. */
export function formatEntryLine(entry: AuditEntry): string {
  const changes = formatChanges(entry);
  return `${entry.time}  ${entry.actor} (${entry.channel})  ${entry.action} ${entry.key_id}${changes.length ? `  ${changes.join('; ')}` : ''}`;
}
