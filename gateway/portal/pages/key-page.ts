import type { SelfServicePolicy } from '../../config/portal-policy';
import { html, type SafeHtml } from '../../console/html';
import { leakNotice } from '../../console/pages/leak-notice';
import { usageBar } from '../../console/pages/usage-bar';
import type { UsageView } from '../../keys/key-admin';
import type { SubscriptionRequest } from '../../requests/subscription-request';
import type { DailyUsage } from '../../usage/usage-reports';
import { PAUSE_EXPLANATIONS, type HolderChange, type HolderKey } from '../holder-view';
import { changeForms, keyPath, type FormProblem } from './change-forms';
import { csrfField, layout, type PortalContext } from './layout';
import { changesTable, requestsTable } from './tables';

/** What a finished change says above the key (post-redirect-get: `?done=`). */
export const DONE: Record<string, string> = {
  addresses: 'The addresses are saved: every gateway uses them within a second.',
  countries: 'The countries are added: the same key covers them now.',
  tier: 'The key is Advanced now: the same key covers the insights area.',
  requested: 'Your request is sent to your provider; its outcome appears under "Your requests".',
  revoked: 'The key is revoked: it no longer works anywhere.',
  'not-rolled': 'Nothing was rolled: the key changed since that page was shown (a second click, or the result page sent again). Its last new value was shown once; roll again here if you still need another.',
};

export interface KeyPageData {
  key: HolderKey;
  usage: UsageView;
  history?: DailyUsage;
  changes: HolderChange[];
  requests: SubscriptionRequest[];
  policy: SelfServicePolicy;
  /** Why nothing can be changed here (the keys file is the store), or undefined. */
  readOnly?: string;
  done?: string;
  problem?: FormProblem;
}

/** One reason a key is paused: why, what settles it, and for an unpaid renewal the open invoice when there is one. */
function reasonItem(k: HolderKey, reason: string): SafeHtml {
  const e = Object.hasOwn(PAUSE_EXPLANATIONS, reason) ? PAUSE_EXPLANATIONS[reason]! : { why: reason, settles: '' };
  const invoice = reason === 'unpaid_renewal' && k.invoiceUrl ? html` <a id="invoice-link" href="${k.invoiceUrl}" rel="noopener noreferrer" target="_blank">Pay the open invoice</a>` : '';
  return html`<li data-reason="${reason}">${e.why[0]!.toUpperCase()}${e.why.slice(1)}. <span class="pause-settles">${e.settles}</span>${invoice}</li>`;
}

/** The key's state; a paused key lists each reason and what settles it (it works again once none is left). */
function state(k: HolderKey): SafeHtml {
  if (k.status !== 'paused') return html`<span class="state-${k.status}" id="key-state">${k.status}</span>`;
  const reasons = k.pauseReasons ?? [];
  const lead = reasons.length > 1 ? html`<p class="muted">It works again once every reason below is settled.</p>` : '';
  return html`<span class="state-paused" id="key-state">paused</span>${reasons.length ? html`${lead}<ul id="pause-reasons">${reasons.map((r) => reasonItem(k, r))}</ul>` : ''}`;
}

function history(d: KeyPageData): SafeHtml {
  if (!d.history) return html`<p class="muted">Not recorded by this gateway.</p>`;
  const days = [...d.history.days].reverse();
  return html`<table id="usage-history">
<caption class="muted">The last ${days.length} days (UTC), newest first.</caption>
<thead><tr><th scope="col">Date</th><th scope="col">Answered</th><th scope="col">Refused</th></tr></thead>
<tbody>
${days.map((day) => {
    const refused = Object.entries(day.refused);
    return html`<tr data-date="${day.date}"><td class="num">${day.date}</td><td class="num">${day.accepted.toLocaleString('en-GB')}</td><td>${refused.length ? refused.map(([code, n]) => `${code} ${n}`).join(', ') : '—'}</td></tr>`;
  })}
</tbody>
</table>`;
}

/** The holder's way to roll a leaked key: the roll itself when the policy allows it, else who can. */
function leakRoll(ctx: PortalContext, k: HolderKey, d: KeyPageData): SafeHtml {
  if (d.readOnly || !d.policy.roll || k.status === 'revoked') return html`Ask your provider to roll it.`;
  return html`<form method="post" action="${keyPath(k.id, '/roll')}">${csrfField(ctx)}<input type="hidden" name="version" value="${k.updatedAt}"><button type="submit" id="leak-roll">Roll the value now</button></form>`;
}

/** One key of the signed-in account: its state, use, history, changes, and the changes the policy allows. */
export function keyPage(ctx: PortalContext, d: KeyPageData): string {
  const k = d.key;
  const done = d.done && Object.hasOwn(DONE, d.done) ? DONE[d.done] : undefined;
  const problem = d.problem ? html`<p class="notice error" role="alert">The form has a problem: see the message beside the field. Nothing was changed.</p>` : '';
  return layout(`Key ${k.id}`, ctx, html`
${done ? html`<p class="notice info" role="status">${done}</p>` : ''}${problem}
${k.leak ? leakNotice(k.leak, leakRoll(ctx, k, d)) : ''}
<dl class="record">
  <dt>State</dt><dd>${state(k)}</dd>
  <dt>Tier</dt><dd id="key-tier">${k.tier}</dd>
  <dt>Countries</dt><dd id="key-countries">${k.countries.join(', ')}</dd>
  <dt>Addresses</dt><dd id="key-addresses">${k.addresses.join(', ')}</dd>
  <dt>Expires</dt><dd>${k.expiresAt ?? 'never'}</dd>
  <dt>Limits</dt><dd>${k.limits.per_minute} per minute, ${k.limits.per_day} per day, ${k.limits.per_month} per month</dd>
  ${k.previousValidUntil ? html`<dt>Previous value</dt><dd>still accepted until ${k.previousValidUntil}</dd>` : ''}
</dl>
<h2>Use now</h2>
<table id="use-now">
<thead><tr><th scope="col">Window</th><th scope="col">Used / limit</th><th scope="col">Resets (UTC)</th></tr></thead>
<tbody>
${(['minute', 'day', 'month'] as const).map((w) => html`<tr><td>${w === 'day' ? 'today' : w === 'month' ? 'this month' : 'this minute'}</td><td>${usageBar(d.usage, w, k.id)}</td><td>${d.usage.windows.find((x) => x.window === w)?.resets_at ?? ''}</td></tr>`)}
</tbody>
</table>
${changeForms(ctx, k, d.policy, d.readOnly, d.problem)}
${d.requests.length ? html`<h2>Requests for this key</h2>${requestsTable(d.requests)}` : ''}
<h2>Daily history</h2>
${history(d)}
<h2>Changes</h2>
${changesTable(d.changes, 'No recorded changes to this key.')}`);
}
