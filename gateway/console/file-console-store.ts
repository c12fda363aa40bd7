import type { AuditPage, AuditQuery } from '../audit/audit-log';
import type { Counters, WindowState } from '../limits/counters';
import { ApiError } from '../errors';
import type { UsageView } from '../keys/key-admin';
import { fileKeyView } from '../keys/file-key-view';
import type { FileKey } from '../keys/keys-file';
import { windowsAt } from '../limits/windows';
import type { ConsoleStore } from './console-store';

/**
 * The console over the keys file: read-only (the file is the source; change it there and the
 * gateway reloads it). Records are the ones this instance serves now; use now is read from the
 * counters without counting (`peek`); the audit log is what this instance's reloads changed.
 */
export function fileConsoleStore(o: {
  file: string;
  keys: () => readonly FileKey[];
  counters: Counters;
  audit: { read(query: AuditQuery): Promise<AuditPage> };
  usage?: Pick<ConsoleStore, 'history' | 'report' | 'reportCsv'>;
  /** The account a key names (the file's records do not carry it; gateway/accounts/ reads it). */
  accountOf?: (keyId: string) => Promise<string | undefined>;
}): ConsoleStore {
  const find = (id: string): FileKey => {
    const key = o.keys().find((k) => k.record.id === id);
    if (!key) throw new ApiError('not_found', {}, undefined, `No key with id "${id}".`);
    return key;
  };
  return {
    source: `the keys file ${o.file}`,
    ...o.usage,
    list: async () => o.keys().map(fileKeyView).sort((a, b) => a.id.localeCompare(b.id)),
    async show(id) {
      const view = fileKeyView(find(id));
      const account = await o.accountOf?.(id);
      return account === undefined ? view : { ...view, account };
    },
    async usage(id): Promise<UsageView> {
      const key = find(id);
      const decision = await o.counters.peek(id, key.record.limits);
      const windows = decision.kind === 'unavailable' ? [] : decision.windows;
      const bounds = windowsAt(Date.now());
      return {
        id,
        windows: windows.map((w: WindowState) => ({
          window: w.name,
          used: Math.max(0, w.limit - w.remaining),
          limit: w.limit,
          remaining: w.remaining,
          resets_at: new Date(bounds[w.name].reset).toISOString(),
        })),
      };
    },
    readAudit: (query) => o.audit.read(query),
  };
}
