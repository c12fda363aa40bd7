import { html, type SafeHtml } from '../../console/html';
import type { SubscriptionRequest } from '../../requests/subscription-request';
import type { HolderChange } from '../holder-view';

const show = (v: unknown): string => (v === null || v === undefined ? '—' : Array.isArray(v) ? v.join(', ') : String(v));

/** A key's changes as the holder sees them, newest first. */
export function changesTable(changes: readonly HolderChange[], empty: string): SafeHtml {
  if (!changes.length) return html`<p class="muted">${empty}</p>`;
  return html`<table id="changes">
<thead><tr><th scope="col">Time (UTC)</th><th scope="col">By</th><th scope="col">What</th></tr></thead>
<tbody>
${changes.map((c) => html`<tr><td class="num">${c.time}</td><td>${c.by}</td><td>${c.action}${Object.keys(c.changes).length
    ? html`<ul class="changes">${Object.entries(c.changes).map(([name, ch]) => html`<li>${name}: ${show(ch.before)} → ${show(ch.after)}</li>`)}</ul>`
    : ''}</td></tr>`)}
</tbody>
</table>`;
}

export const describeChange = (r: SubscriptionRequest): string =>
  'tier' in r.change ? `tier ${r.change.tier}` : `add ${r.change.countries.join(', ')}`;

/** Requests and their outcome, newest first. */
export function requestsTable(requests: readonly SubscriptionRequest[]): SafeHtml {
  return html`<table id="requests">
<thead><tr><th scope="col">Asked (UTC)</th><th scope="col">Key</th><th scope="col">Change</th><th scope="col">Outcome</th><th scope="col">Decided (UTC)</th></tr></thead>
<tbody>
${requests.map((r) => html`<tr data-request="${r.id}"><td class="num">${r.createdAt}</td><td><a href="/portal/keys/${encodeURIComponent(r.keyId)}">${r.keyId}</a></td><td>${describeChange(r)}</td><td class="request-${r.status}">${r.status}</td><td class="num">${r.decidedAt ?? '—'}</td></tr>`)}
</tbody>
</table>`;
}
