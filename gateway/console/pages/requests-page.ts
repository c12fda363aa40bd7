import type { RequestView } from '../../requests/subscription-request';
import { html } from '../html';
import { csrfField, layout, type PageContext } from './layout';

export interface RequestsPageData {
  requests: RequestView[];
  status: string;
  nextCursor: string | null;
  /** The role may approve and decline. */
  canDecide: boolean;
  done?: string;
}

/** A change in words: "add countries FR, DE" or "tier advanced". */
export const changeText = (change: RequestView['change']): string => ('tier' in change ? `tier ${change.tier}` : `add countries ${change.countries.join(', ')}`);

const DONE: Record<string, string> = {
  approved: 'Approved: the key is changed, and every gateway applies it within a second.',
  declined: 'Declined: the key is unchanged.',
};
const STATUSES = ['pending', 'approved', 'declined', ''] as const;

/** The holders' subscription requests, with approve and decline forms on the pending ones. */
export function requestsPage(ctx: PageContext, d: RequestsPageData): string {
  const done = d.done ? DONE[d.done] : undefined;
  const decide = (id: string, action: 'approve' | 'decline') => html`<form method="post" action="/console/requests/${encodeURIComponent(id)}/${action}">${csrfField(ctx)}<button type="submit"${action === 'decline' ? html` class="secondary"` : ''}>${action === 'approve' ? 'Approve' : 'Decline'}</button></form>`;
  return layout('Subscription requests', ctx, html`
${done ? html`<p class="notice" role="status">${done}</p>` : ''}
<form class="filters" method="get" action="/console/requests" role="search" aria-label="Filter requests">
  <label for="status">State <select id="status" name="status">${STATUSES.map((s) => html`<option value="${s}"${d.status === s ? html` selected` : ''}>${s || 'any'}</option>`)}</select></label>
  <button type="submit">Show</button>
</form>
<table id="requests">
<caption class="muted">${d.requests.length ? 'Newest first.' : 'No request in this state.'}</caption>
<thead><tr><th scope="col">Requested (UTC)</th><th scope="col">Account</th><th scope="col">Key</th><th scope="col">Change</th><th scope="col">State</th><th scope="col">Decision</th></tr></thead>
<tbody>
${d.requests.map((r) => html`<tr data-request-id="${r.id}">
  <td class="num">${r.created_at}</td>
  <td><a href="/console/accounts/${encodeURIComponent(r.account_id)}">${r.account_id}</a></td>
  <td><a href="/console/keys/${encodeURIComponent(r.key_id)}">${r.key_id}</a></td>
  <td>${changeText(r.change)}</td>
  <td>${r.status}</td>
  <td>${r.status === 'pending'
    ? (d.canDecide ? html`<div class="actions">${decide(r.id, 'approve')}${decide(r.id, 'decline')}</div>` : html`<span class="muted">an operator decides</span>`)
    : html`${r.decided_by ?? ''} <span class="muted">${r.decided_at ?? ''}</span>`}</td>
</tr>`)}
</tbody>
</table>
${d.nextCursor ? html`<p class="pager"><a href="/console/requests?${new URLSearchParams({ status: d.status, cursor: d.nextCursor }).toString()}">Next page</a></p>` : ''}`);
}
