import type { AuditPage } from '../../audit/audit-log';
import { html } from '../html';
import { auditTable } from './audit-table';
import { layout, type PageContext } from './layout';

export interface AuditFilter {
  key_id: string;
  since: string;
}

/** The audit log, newest first, filtered by key and time, paged by cursor. */
export function auditPage(ctx: PageContext, page: AuditPage, filter: AuditFilter, source: string): string {
  const next = page.next_cursor ? `/console/audit?${new URLSearchParams({ ...filter, cursor: page.next_cursor })}` : undefined;
  return layout('Audit log', ctx, html`
<p class="muted">${source}</p>
<form class="filters" method="get" action="/console/audit" role="search" aria-label="Filter the audit log">
  <label for="key_id">Key id <input id="key_id" name="key_id" value="${filter.key_id}"></label>
  <label for="since">Since (date or date-time, UTC) <input id="since" name="since" value="${filter.since}" placeholder="2026-11-01"></label>
  <button type="submit">Filter</button>
</form>
${auditTable(page.entries, page.entries.length ? 'Newest first.' : 'No entries match.')}
${next ? html`<p class="pager"><a href="${next}">Older entries</a></p>` : ''}`);
}
