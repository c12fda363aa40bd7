import type { KeyView, UsageView } from '../../keys/key-admin';
import { html } from '../html';
import { layout, type PageContext } from './layout';
import { usageBar } from './usage-bar';

export interface KeysFilter {
  q: string;
  state: string;
  tier: string;
  country: string;
  /** Where this page starts (a `next_cursor` of the store); absent: the first page. */
  cursor?: string;
}

export const KEYS_PER_PAGE = 50;

const option = (value: string, label: string, selected: string) => html`<option value="${value}"${selected === value ? html` selected` : ''}>${label}</option>`;

export interface KeysListData {
  rows: Array<{ key: KeyView; usage: UsageView }>;
  /** Where the next page starts; null on the last. */
  next_cursor: string | null;
  /** Records looked through for this page, and whether the look stopped at its bound. */
  scanned: number;
  stoppedAtBound: boolean;
  filter: KeysFilter;
  source: string;
  canIssue: boolean;
  readOnly: boolean;
}

/**
 * The keys page: filters, then one row per key with its day and month use as bars, a page at a
 * time (the store's order; sorted by id within the page), with a link to the next page.
 */
export function keysListPage(ctx: PageContext, d: KeysListData): string {
  const f = d.filter;
  const link = (cursor?: string) => `/console/keys?${new URLSearchParams({ q: f.q, state: f.state, tier: f.tier, country: f.country, ...(cursor ? { cursor } : {}) })}`;
  const rows = [...d.rows].sort((a, b) => (a.key.id < b.key.id ? -1 : a.key.id > b.key.id ? 1 : 0));
  const shown = `${rows.length} ${rows.length === 1 ? 'key' : 'keys'}${f.cursor ? ' on this page' : ''}`;
  return layout('Keys', ctx, html`
<p class="muted">Keys come from ${d.source}.${d.readOnly ? ' This console is read-only: change the keys there.' : ''}</p>
${d.canIssue ? html`<p><a class="button" href="/console/keys/new">Create a key</a></p>` : ''}
<form class="filters" method="get" action="/console/keys" role="search" aria-label="Filter keys">
  <label for="q">Key id contains <input id="q" name="q" value="${f.q}"></label>
  <label for="state">State <select id="state" name="state">${option('', 'any', f.state)}${option('active', 'active', f.state)}${option('paused', 'paused', f.state)}${option('revoked', 'revoked', f.state)}</select></label>
  <label for="tier">Tier <select id="tier" name="tier">${option('', 'any', f.tier)}${option('standard', 'standard', f.tier)}${option('advanced', 'advanced', f.tier)}</select></label>
  <label for="country">Country <input id="country" name="country" value="${f.country}" size="4" maxlength="2" placeholder="GB"></label>
  <button type="submit">Filter</button>
</form>
<p class="muted" id="count">${shown}.${d.stoppedAtBound ? ` Looked through ${d.scanned} records without filling the page; the next page looks further.` : ''}</p>
<table aria-describedby="count">
<thead><tr><th scope="col">Key</th><th scope="col">Tier</th><th scope="col">Countries</th><th scope="col">Address</th><th scope="col">State</th><th scope="col">Today</th><th scope="col">This month</th></tr></thead>
<tbody>
${rows.map(({ key, usage }) => html`<tr data-key-id="${key.id}">
  <td><a href="/console/keys/${encodeURIComponent(key.id)}">${key.id}</a></td>
  <td>${key.tier}</td>
  <td>${key.countries.join(', ')}</td>
  <td>${key.addresses.join(', ')}</td>
  <td><span class="state-${key.status}">${key.status}</span>${key.status === 'paused' && key.pause_reasons?.length ? html` <span class="muted">(${key.pause_reasons.join(', ')})</span>` : ''}${key.leaked_at ? html` <span class="state-revoked" title="reported leaked ${key.leaked_at}: roll it">leaked</span>` : ''}</td>
  <td>${usageBar(usage, 'day', key.id)}</td>
  <td>${usageBar(usage, 'month', key.id)}</td>
</tr>`)}
</tbody>
</table>
<p class="pager">${f.cursor ? html`<a href="${link()}">First page</a> ` : ''}${d.next_cursor ? html`<a href="${link(d.next_cursor)}">Next page</a>` : ''}</p>`);
}
