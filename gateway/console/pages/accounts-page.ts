import type { AccountView } from '../../accounts/account';
import type { KeyView } from '../../keys/key-admin';
import { html } from '../html';
import { layout, type PageContext } from './layout';

export interface AccountsListData {
  rows: Array<{ account: AccountView; keyCount: number }>;
  nextCursor: string | null;
  readOnly: boolean;
}

const accountPath = (id: string): string => `/console/accounts/${encodeURIComponent(id)}`;

/** The holders' accounts, in id order, one page at a time. */
export function accountsListPage(ctx: PageContext, d: AccountsListData): string {
  return layout('Accounts', ctx, html`
<p class="muted">Key holders: the people who may sign in to the portal for their keys.${d.readOnly ? ' Read-only here: accounts come from the keys file\'s accounts list.' : ' Manage them with keys account … or /admin/accounts.'}</p>
<table>
<caption class="muted">${d.rows.length} ${d.rows.length === 1 ? 'account' : 'accounts'} on this page.</caption>
<thead><tr><th scope="col">Account</th><th scope="col">Name</th><th scope="col">Emails</th><th scope="col">Billing customer</th><th scope="col">Keys</th></tr></thead>
<tbody>
${d.rows.map(({ account, keyCount }) => html`<tr data-account-id="${account.id}">
  <td><a href="${accountPath(account.id)}">${account.id}</a></td>
  <td>${account.name}</td>
  <td>${account.emails.join(', ')}</td>
  <td>${account.billing_customer ?? html`<span class="muted">—</span>`}</td>
  <td class="num">${keyCount}</td>
</tr>`)}
</tbody>
</table>
${d.nextCursor ? html`<p class="pager"><a href="/console/accounts?cursor=${encodeURIComponent(d.nextCursor)}">Next page</a></p>` : ''}`);
}

export interface AccountPageData {
  account: AccountView;
  /** The account's keys (a key named by the account but gone meanwhile is left out). */
  keys: KeyView[];
  requests: Array<{ id: string; key_id: string; change: string; status: string; created_at: string }>;
}

/** One account: its record, its keys (each linking to its page), and its subscription requests. */
export function accountPage(ctx: PageContext, d: AccountPageData): string {
  const a = d.account;
  return layout(`Account ${a.id}`, ctx, html`
<dl class="record">
  <dt>Name</dt><dd>${a.name}</dd>
  <dt>Emails</dt><dd>${a.emails.join(', ')}</dd>
  <dt>Billing customer</dt><dd>${a.billing_customer ?? html`<span class="muted">none</span>`}</dd>
  <dt>Created</dt><dd>${a.created_at || html`<span class="muted">—</span>`}</dd>
  <dt>Updated</dt><dd>${a.updated_at || html`<span class="muted">—</span>`}</dd>
</dl>
<h2>Keys</h2>
${d.keys.length ? html`<table id="account-keys">
<thead><tr><th scope="col">Key</th><th scope="col">Tier</th><th scope="col">Countries</th><th scope="col">State</th></tr></thead>
<tbody>
${d.keys.map((k) => html`<tr data-key-id="${k.id}"><td><a href="/console/keys/${encodeURIComponent(k.id)}">${k.id}</a></td><td>${k.tier}</td><td>${k.countries.join(', ')}</td><td><span class="state-${k.status}">${k.status}</span></td></tr>`)}
</tbody>
</table>` : html`<p class="muted">No key names this account.</p>`}
<h2>Subscription requests</h2>
${d.requests.length ? html`<table id="account-requests">
<thead><tr><th scope="col">Requested (UTC)</th><th scope="col">Key</th><th scope="col">Change</th><th scope="col">State</th></tr></thead>
<tbody>
${d.requests.map((r) => html`<tr data-request-id="${r.id}"><td class="num">${r.created_at}</td><td>${r.key_id}</td><td>${r.change}</td><td>${r.status}</td></tr>`)}
</tbody>
</table>
<p><a href="/console/requests">All pending requests</a></p>` : html`<p class="muted">None.</p>`}`);
}
