import type { Actor } from './actor';
import type { AuditAction, AuditEntry, FieldChange } from './audit-entry';
import { decodeCursor, encodeCursor, type AuditLog, type AuditPage, type AuditQuery } from './audit-log';

export interface MemoryAuditLog extends AuditLog {
  append(actor: Actor, action: AuditAction, keyId: string, changes: Record<string, FieldChange>, accountId?: string): void;
  readonly size: number;
}

/**
 * The in-memory audit log: the keys-file store's (what each reload changed; it lives as long as the
 * process, since the file itself, under version control, is the lasting record) and the twin of the
 * Redis streams for tests. Capped at `maxEntries` for holders' entries and as many for the rest,
 * oldest dropped first.
 */
export function createMemoryAuditLog(maxEntries = 100_000): MemoryAuditLog {
  const entries: AuditEntry[] = [];
  let sequence = 0;
  const kept = { holders: 0, others: 0 };
  return {
    append(actor, action, keyId, changes, accountId) {
      sequence++;
      entries.push({ id: String(sequence), time: new Date().toISOString(), actor: actor.name, channel: actor.channel, action, key_id: keyId, ...(accountId !== undefined ? { account_id: accountId } : {}), changes });
      // Holders' entries (channel `portal`) and the rest are capped apart, as in Redis: one side never pushes out the other.
      const holders = actor.channel === 'portal';
      if (holders) kept.holders++;
      else kept.others++;
      if ((holders ? kept.holders : kept.others) > maxEntries) {
        entries.splice(entries.findIndex((e) => (e.channel === 'portal') === holders), 1);
        if (holders) kept.holders--;
        else kept.others--;
      }
    },
    async read(query: AuditQuery): Promise<AuditPage> {
      const before = query.cursor ? Number(decodeCursor(query.cursor, /^\d{1,15}$/)) : Infinity;
      const out: AuditEntry[] = [];
      let i = entries.length - 1;
      for (; i >= 0 && out.length < query.limit; i--) {
        const entry = entries[i]!;
        if (Number(entry.id) >= before) continue;
        if (query.sinceMs !== undefined && Date.parse(entry.time) < query.sinceMs) {
          i = -1;
          break;
        }
        if (query.keyId === undefined || entry.key_id === query.keyId) out.push(entry);
      }
      const more = i >= 0 && out.length > 0;
      return { entries: out, next_cursor: more ? encodeCursor(out[out.length - 1]!.id) : null };
    },
    get size() {
      return entries.length;
    },
  };
}
