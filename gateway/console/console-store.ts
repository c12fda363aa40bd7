import type { AuditPage, AuditQuery } from '../audit/audit-log';
import type { KeyAdmin, KeyView, UsageView } from '../keys/key-admin';
import { PAGE } from '../keys/key-page';
import type { DailyUsage, MonthlyReport } from '../usage/usage-reports';

/**
 * What the console reads, whichever key store is in use, and where the keys come from. `admin` is
 * there when the store can be changed from the console (the Redis key store); without it the
 * console is read-only and says why.
 */
export interface ConsoleStore {
  /** One line for the page: where the records live. */
  readonly source: string;
  readonly admin?: KeyAdmin;
  list(): Promise<KeyView[]>;
  show(id: string): Promise<KeyView>;
  usage(id: string): Promise<UsageView>;
  readAudit(query: AuditQuery): Promise<AuditPage>;
  /** The key's daily usage history (accepted and refusals by code), oldest first, when it is recorded. */
  history?(id: string, days: number): Promise<DailyUsage>;
  /** Every key's totals for a month (YYYY-MM), when usage is recorded; and the same as CSV. */
  report?(month: string): Promise<MonthlyReport>;
  reportCsv?(report: MonthlyReport): string;
}

/**
 * The console over the key admin (which serves the Redis key store): everything goes through it,
 * writes included. It takes no Redis connection of its own.
 */
export function keyAdminConsoleStore(admin: KeyAdmin, source: string, usage: Pick<ConsoleStore, 'history' | 'report' | 'reportCsv'> = {}): ConsoleStore {
  return {
    source,
    ...usage,
    admin,
    // Page by page (the key admin reads at most 1,000 records at a time), sorted by id as the console shows them.
    async list() {
      const all: KeyView[] = [];
      let cursor: string | undefined;
      do {
        const page = await admin.list({ limit: PAGE.max, ...(cursor !== undefined ? { cursor } : {}) });
        all.push(...page.keys);
        cursor = page.next_cursor ?? undefined;
      } while (cursor !== undefined);
      return all.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },
    show: (id) => admin.show(id),
    usage: (id) => admin.usage(id),
    readAudit: (query) => admin.readAudit(query),
  };
}

/** The former name of `keyAdminConsoleStore` (it never took a Redis connection); kept until start-up is re-wired. */
export const redisConsoleStore = keyAdminConsoleStore;
