import type { AuditEntry } from '../../audit/audit-entry';
import type { KeyView, UsageView } from '../../keys/key-admin';
import type { DailyUsage } from '../../usage/usage-reports';
import { allows, type Role } from '../../operators/roles';
import { html, type SafeHtml } from '../html';
import { auditTable } from './audit-table';
import { leakNotice } from './leak-notice';
import { pauseReasonList, settleForms } from './pause-reasons';
import { csrfField, layout, type PageContext } from './layout';
import { usageBar } from './usage-bar';

/** What a finished action says above the record (post-redirect-get: `?done=`). */
export const DONE_MESSAGES: Record<string, string> = {
  paused: 'The key is paused: every gateway refuses it with 403 key_paused within a second.',
  settled: 'Settled: the key is active again once no pause reason is left.',
  changed: 'The record is changed.',
  revoked: 'The key is revoked: it no longer authenticates anywhere.',
};

export interface KeyPageData {
  key: KeyView;
  usage: UsageView;
  audit: AuditEntry[];
  history?: DailyUsage;
  role: Role;
  readOnly: boolean;
  source: string;
  done?: string;
}

const path = (id: string, rest = ''): string => `/console/keys/${encodeURIComponent(id)}${rest}`;

function actions(ctx: PageContext, d: KeyPageData): SafeHtml {
  if (d.readOnly) return html`<p class="muted">Read-only: keys come from ${d.source}; change them there.</p>`;
  const k = d.key;
  const manage = allows(d.role, 'manage');
  const issue = allows(d.role, 'issue');
  if (!manage && !issue) return html`<p class="muted">Your role (${d.role}) reads only.</p>`;
  const live = k.status !== 'revoked';
  return html`<div class="actions">
  ${manage && live ? html`<a class="button secondary" href="${path(k.id, '/confirm/pause')}">${k.status === 'paused' ? 'Add a pause reason…' : 'Pause…'}</a>` : ''}
  ${manage && k.status === 'paused' ? settleForms(ctx, k, path(k.id, '/settle')) : ''}
  ${issue && live ? html`<a class="button secondary" href="${path(k.id, '/confirm/roll')}">Roll the value…</a>` : ''}
  ${issue && live ? html`<a class="button danger" href="${path(k.id, '/confirm/revoke')}">Revoke…</a>` : ''}
</div>
${manage && live ? html`<h2>Change the record</h2>
<form class="stacked" method="post" action="${path(k.id, '/set')}">
  ${csrfField(ctx)}
  <label for="tier">Tier <select id="tier" name="tier">
    <option value="standard"${k.tier === 'standard' ? html` selected` : ''}>standard</option>
    <option value="advanced"${k.tier === 'advanced' ? html` selected` : ''}>advanced</option>
  </select></label>
  <label for="countries">Countries (comma-separated alpha-2) <input id="countries" name="countries" value="${k.countries.join(', ')}" required></label>
  <label for="address">Address <input id="address" name="address" value="${k.addresses.join(', ')}" required></label>
  <label for="per_minute">Per minute (empty: unchanged) <input id="per_minute" name="per_minute" inputmode="numeric" placeholder="${k.limits.per_minute}"></label>
  <label for="per_day">Per day (empty: unchanged) <input id="per_day" name="per_day" inputmode="numeric" placeholder="${k.limits.per_day}"></label>
  <label for="per_month">Per month (empty: unchanged) <input id="per_month" name="per_month" inputmode="numeric" placeholder="${k.limits.per_month}"></label>
  <div><button type="submit">Save changes</button></div>
</form>` : ''}`;
}

/** The last days' answers to this key, newest first: accepted, and refusals by code. */
function history(d: KeyPageData): SafeHtml {
  if (!d.history) return html`<p class="muted">Not recorded by this gateway.</p>`;
  const days = [...d.history.days].reverse();
  return html`<table id="usage-history">
<caption class="muted">The last ${days.length} days (UTC). Counted by each gateway and written every few seconds.</caption>
<thead><tr><th scope="col">Date</th><th scope="col">Accepted</th><th scope="col">Refused</th></tr></thead>
<tbody>
${days.map((day) => {
    const refused = Object.entries(day.refused);
    return html`<tr data-date="${day.date}"><td class="num">${day.date}</td><td class="num" data-accepted="${day.accepted}">${day.accepted.toLocaleString('en-GB')}</td><td>${refused.length ? refused.map(([code, n]) => `${code} ${n}`).join(', ') : html`<span class="muted">—</span>`}</td></tr>`;
  })}
</tbody>
</table>
<p class="muted">Monthly totals for billing: <code>keys report --month YYYY-MM</code> or <code>GET /admin/reports/monthly</code>.</p>`;
}

/** The operator's way to roll a leaked key (the roll's confirmation page), or who can. */
function leakRoll(d: KeyPageData): SafeHtml {
  if (d.readOnly) return html`Roll it in ${d.source}.`;
  if (!allows(d.role, 'issue') || d.key.status === 'revoked') return html`Rolling needs the role admin.`;
  return html`<a class="button" href="${path(d.key.id, '/confirm/roll')}" id="leak-roll">Roll the value…</a>`;
}

/** One key: its record, its use now, the place for its history, its recent audit entries, and the actions the role allows. */
export function keyPage(ctx: PageContext, d: KeyPageData): string {
  const k = d.key;
  // Own properties only: `?done=constructor` names no message.
  const done = d.done && Object.hasOwn(DONE_MESSAGES, d.done) ? DONE_MESSAGES[d.done] : undefined;
  return layout(`Key ${k.id}`, ctx, html`
${done ? html`<p class="notice" role="status">${done}</p>` : ''}
${k.leaked_at ? leakNotice({ leakedAt: k.leaked_at, ...(k.leak_url ? { url: k.leak_url } : {}), ...(k.value_ended_at ? { valueEndedAt: k.value_ended_at } : {}) }, leakRoll(d)) : ''}
<dl class="record">
  <dt>State</dt><dd><span class="state-${k.status}" id="key-state">${k.status}</span>${pauseReasonList(k)}</dd>
  <dt>Tier</dt><dd>${k.tier}</dd>
  <dt>Countries</dt><dd>${k.countries.join(', ')}</dd>
  <dt>Address</dt><dd>${k.addresses.join(', ')}</dd>
  <dt>Account</dt><dd id="key-account">${k.account ? html`<a href="/console/accounts/${encodeURIComponent(k.account)}">${k.account}</a>` : html`<span class="muted">none (an operator's key)</span>`}</dd>
  <dt>Limits</dt><dd>${k.limits.per_minute} per minute, ${k.limits.per_day} per day, ${k.limits.per_month} per month${k.limit_overrides ? ' (overridden for this key)' : ' (the tier\'s)'}</dd>
  ${k.previous_key_valid_until ? html`<dt>Previous value</dt><dd>still accepted until ${k.previous_key_valid_until}</dd>` : ''}
  <dt>Created</dt><dd>${k.created_at}</dd>
  <dt>Updated</dt><dd>${k.updated_at}</dd>
</dl>
${actions(ctx, d)}
<h2>Use now</h2>
<table>
<thead><tr><th scope="col">Window</th><th scope="col">Used</th><th scope="col">Resets (UTC)</th></tr></thead>
<tbody>
${(['minute', 'day', 'month'] as const).map((w) => html`<tr><td>${w === 'day' ? 'today' : w === 'month' ? 'this month' : 'this minute'}</td><td>${usageBar(d.usage, w, k.id)}</td><td>${d.usage.windows.find((x) => x.window === w)?.resets_at ?? ''}</td></tr>`)}
</tbody>
</table>
<h2>Usage history</h2>
${history(d)}
<h2>Recent changes</h2>
${auditTable(d.audit, d.audit.length ? 'The last changes to this key, newest first.' : 'No recorded changes.')}
<p><a href="/console/audit?key_id=${encodeURIComponent(k.id)}">All changes to this key</a></p>`);
}
