import type { AuditEntry } from '../../audit/audit-entry';
import { formatChanges } from '../../audit/format-entry';
import { html } from '../html';

/** Audit entries as a table: time, who (and through what), action, key, and each change. */
export const auditTable = (entries: AuditEntry[], caption: string) => html`<table>
<caption class="muted">${caption}</caption>
<thead><tr><th scope="col">Time (UTC)</th><th scope="col">Actor</th><th scope="col">Channel</th><th scope="col">Action</th><th scope="col">Key</th><th scope="col">Changes</th></tr></thead>
<tbody>
${entries.map((e) => html`<tr data-audit-id="${e.id}">
  <td class="num">${e.time.replace('T', ' ').replace(/\.\d+Z$/, '')}</td>
  <td>${e.actor}</td>
  <td>${e.channel}</td>
  <td>${e.action}</td>
  <td>${e.key_id ? html`<a href="/console/keys/${encodeURIComponent(e.key_id)}">${e.key_id}</a>` : e.account_id ? html`account <a href="/console/accounts/${encodeURIComponent(e.account_id)}">${e.account_id}</a>` : ''}</td>
  <td>${formatChanges(e).length ? html`<ul class="changes">${formatChanges(e).map((c) => html`<li>${c}</li>`)}</ul>` : html`<span class="muted">—</span>`}</td>
</tr>`)}
</tbody>
</table>`;
