import type { AuditPage, AuditQuery } from '../audit/audit-log';
import type { Counters, WindowState } from '../limits/counters';
import { ApiError } from '../errors';
import { invalidParameter } from '../http/invalid-parameter';
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
  // The records in id order and by id, made once per loaded set (a reload hands a new array).
  let indexedFor: readonly FileKey[] | undefined;
  let sorted: FileKey[] = [];
  let byId = new Map<string, FileKey>();
  const index = (): { sorted: FileKey[]; byId: Map<string, FileKey> } => {
    const keys = o.keys();
    if (keys !== indexedFor) {
      sorted = [...keys].sort((a, b) => (a.record.id < b.record.id ? -1 : a.record.id > b.record.id ? 1 : 0));
      byId = new Map(keys.map((k) => [k.record.id, k]));
      indexedFor = keys;
    }
    return { sorted, byId };
  };
  const find = (id: string): FileKey => {
    const key = index().byId.get(id);
    if (!key) throw new ApiError('not_found', {}, undefined, `No key with id "${id}".`);
    return key;
  };
  return {
    source: `the keys file ${o.file}`,
    ...o.usage,
    // A page after the cursor (the last id shown, base64url), found by binary search: only the page is viewed.
    async page({ limit, cursor }) {
      const all = index().sorted;
      const after = cursor === undefined ? undefined : Buffer.from(cursor, 'base64url').toString('utf8');
      if (cursor !== undefined && (after === '' || Buffer.from(after!, 'utf8').toString('base64url') !== cursor)) throw invalidParameter('cursor', 'not a cursor this console gave');
      let lo = 0;
      let hi = all.length;
      while (after !== undefined && lo < hi) {
        const mid = (lo + hi) >> 1;
        if (all[mid]!.record.id <= after) lo = mid + 1;
        else hi = mid;
      }
      const keys = all.slice(lo, lo + limit);
      const more = lo + limit < all.length;
      return { keys: keys.map(fileKeyView), next_cursor: more ? Buffer.from(keys[keys.length - 1]!.record.id, 'utf8').toString('base64url') : null };
    },
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
