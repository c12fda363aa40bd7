import { fileKeyView } from './file-key-view';
import type { FileKey } from './keys-file';
import type { Actor } from '../audit/actor';
import { diffRecords } from '../audit/audit-entry';
import type { MemoryAuditLog } from '../audit/memory-audit-log';

/** Fields of a keys-file view that are not the record's own (the file has no times). */
const asRecord = (key: FileKey | undefined): Record<string, unknown> | undefined => {
  if (!key) return undefined;
  const { created_at: _c, updated_at: _u, ...view } = fileKeyView(key);
  return view;
};

/**
 * With the keys file as the store, a reload is the change: each record it adds, changes or removes
 * is one entry (`file_add`, `file_change`, `file_remove`), actor the file, channel `keys_file`.
 * A record whose value was rotated with no visible field changed shows as `key_value: rotated`,
 * never the hash. Returns how many entries were written.
 */
export function recordReload(log: MemoryAuditLog, actor: Actor, before: readonly FileKey[], after: readonly FileKey[]): number {
  const old = new Map(before.map((k) => [k.record.id, k]));
  const next = new Map(after.map((k) => [k.record.id, k]));
  let written = 0;
  for (const id of [...new Set([...old.keys(), ...next.keys()])].sort()) {
    const a = old.get(id);
    const b = next.get(id);
    const changes = diffRecords(asRecord(a), asRecord(b));
    if (a && b && a.record.keySha256 !== b.record.keySha256) changes.key_value = { before: 'previous value', after: 'rotated' };
    if (!Object.keys(changes).length) continue;
    log.append(actor, !a ? 'file_add' : !b ? 'file_remove' : 'file_change', id, changes);
    written++;
  }
  return written;
}
