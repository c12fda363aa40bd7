import type { MonthlyReport } from '../../usage/usage-reports';
import { html } from '../html';
import { layout, type PageContext } from './layout';

/** The monthly report (the billing export): every key's accepted requests and refusals for the month. */
export function reportPage(ctx: PageContext, report: MonthlyReport): string {
  const csv = `/console/reports/monthly.csv?${new URLSearchParams({ month: report.month })}`;
  return layout(`Monthly report ${report.month}`, ctx, html`
<form class="filters" method="get" action="/console/reports/monthly" aria-label="Choose the month">
  <label for="month">Month (YYYY-MM, UTC) <input id="month" name="month" value="${report.month}" required pattern="\\d{4}-\\d{2}"></label>
  <button type="submit">Show</button>
  <a class="button secondary" href="${csv}">Download CSV</a>
</form>
<table id="monthly-report">
<caption class="muted">${report.keys.length ? 'Keys with any use this month, by id.' : 'No use recorded this month.'}</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Accepted</th><th scope="col">Refused</th></tr></thead>
<tbody>
${report.keys.map((row) => {
    const refused = Object.entries(row.refused);
    return html`<tr data-key-id="${row.key_id}"><td><a href="/console/keys/${encodeURIComponent(row.key_id)}">${row.key_id}</a></td><td class="num" data-accepted="${row.accepted}">${row.accepted.toLocaleString('en-GB')}</td><td>${refused.length ? refused.map(([code, n]) => `${code} ${n}`).join(', ') : html`<span class="muted">—</span>`}</td></tr>`;
  })}
</tbody>
</table>`);
}
