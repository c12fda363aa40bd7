import { html } from '../../console/html';
import { usageBar } from '../../console/pages/usage-bar';
import type { UsageView } from '../../keys/key-admin';
import type { SubscriptionRequest } from '../../requests/subscription-request';
import type { HolderKey } from '../holder-view';
import { keyPath } from './change-forms';
import { csrfField, layout, type PortalContext } from './layout';
import { requestsTable } from './tables';

/** The account's keys: state, tier, countries, addresses, and today's use. */
export function keysPage(ctx: PortalContext, rows: ReadonlyArray<{ key: HolderKey; usage: UsageView }>): string {
  return layout('Your keys', ctx, html`
${rows.length
    ? html`<table id="keys">
<thead><tr><th scope="col">Key</th><th scope="col">State</th><th scope="col">Tier</th><th scope="col">Countries</th><th scope="col">Addresses</th><th scope="col">Today</th></tr></thead>
<tbody>
${rows.map(({ key: k, usage }) => html`<tr data-key="${k.id}"><td><a href="${keyPath(k.id)}">${k.id}</a></td><td class="state-${k.status}">${k.status}</td><td>${k.tier}</td><td>${k.countries.join(', ')}</td><td>${k.addresses.join(', ')}</td><td>${usageBar(usage, 'day', k.id)}</td></tr>`)}
</tbody>
</table>`
    : html`<p class="muted">Your account has no keys yet. Your provider issues them.</p>`}`);
}

/** A new key value after a roll, shown this once. */
export function rolledPage(ctx: PortalContext, id: string, value: string, previousUntil: string | undefined): string {
  return layout(`Key ${id} rolled`, ctx, html`
<p class="notice warning" role="alert"><strong>Copy this value now: it will not be shown again.</strong> Only its hash is stored; if it is lost, roll the key again.</p>
<p class="secret" id="key-value">${value}</p>
<p>${previousUntil ? `The previous value keeps working until ${previousUntil} (UTC): put the new one in place before then.` : 'The previous value no longer works.'}</p>
<p><a href="${keyPath(id)}">Back to the key</a></p>`);
}

/** The confirmation step of a revocation. */
export function revokePage(ctx: PortalContext, id: string): string {
  return layout(`Revoke key ${id}?`, ctx, html`
<p class="notice warning" role="alert">A revoked key stops working everywhere within a second, and cannot be used again. Your provider can issue a new one.</p>
<form method="post" action="${keyPath(id, '/revoke')}">
  ${csrfField(ctx)}
  <input type="hidden" name="confirm" value="revoke">
  <button type="submit" class="danger" id="confirm-revoke">Revoke ${id}</button>
  <a href="${keyPath(id)}">Cancel</a>
</form>`);
}

/** The account's requests and their outcome. */
export function requestsPage(ctx: PortalContext, requests: readonly SubscriptionRequest[]): string {
  return layout('Your requests', ctx, requests.length ? requestsTable(requests) : html`<p class="muted">No requests yet. Ask for a country or an upgrade on a key's page.</p>`);
}
