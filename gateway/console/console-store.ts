import type { AuditPage, AuditQuery } from '../audit/audit-log';
import type { KeyAdmin, KeyPage, KeyView, UsageView } from '../keys/key-admin';
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
  /** One page of records after `cursor` (bounded: `limit` at most 1,000); `next_cursor` null on the last. */
  page(query: { limit: number; cursor?: string }): Promise<KeyPage>;
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
    // The key admin's pager: SSCAN over the id set, one page of records at a time.
    page: (query) => admin.list(query),
    show: (id) => admin.show(id),
    usage: (id) => admin.usage(id),
    readAudit: (query) => admin.readAudit(query),
  };
}

