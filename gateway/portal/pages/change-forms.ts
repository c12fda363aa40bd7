import type { SelfServicePolicy } from '../../config/portal-policy';
import { html, type SafeHtml } from '../../console/html';
import type { HolderKey } from '../holder-view';
import { csrfField, type PortalContext } from './layout';

/** A form sent back with a problem: which form, which field, what is wrong, what was typed. */
export interface FormProblem {
  readonly form: 'addresses' | 'countries' | 'tier';
  readonly field: string;
  readonly message: string;
  readonly value: string;
}

export const keyPath = (id: string, rest = ''): string => `/portal/keys/${encodeURIComponent(id)}${rest}`;

/** The message beside a field, tied to it by aria-describedby. */
function fieldMessage(id: string, problem: FormProblem | undefined, form: FormProblem['form']): SafeHtml {
  return problem?.form === form ? html`<span class="field-error" id="${id}-error">${problem.message}</span>` : html``;
}
const invalid = (problem: FormProblem | undefined, form: FormProblem['form'], id: string): SafeHtml =>
  problem?.form === form ? html` aria-invalid="true" aria-describedby="${id}-error"` : html``;

function addressesForm(ctx: PortalContext, k: HolderKey, policy: SelfServicePolicy, problem?: FormProblem): SafeHtml {
  const value = problem?.form === 'addresses' ? problem.value : k.addresses.join('\n');
  return html`<section class="change" id="change-addresses"><h2>Addresses</h2>
<form class="stacked" method="post" action="${keyPath(k.id, '/addresses')}">
  ${csrfField(ctx)}
  <label for="addresses">The addresses your servers call from: IPv4 or IPv6 addresses or CIDR ranges, one per line (at most 16)${policy.allowAnyAddress ? ', or any' : ''}
  <textarea id="addresses" name="addresses" required${invalid(problem, 'addresses', 'addresses')}>${value}</textarea></label>
  ${fieldMessage('addresses', problem, 'addresses')}
  <div><button type="submit">Save the addresses</button></div>
</form>
<p class="muted">Every gateway uses the new list within a second.</p></section>`;
}

function countriesForm(ctx: PortalContext, k: HolderKey, policy: SelfServicePolicy, problem?: FormProblem): SafeHtml {
  const direct = policy.countries === 'direct';
  return html`<section class="change" id="change-countries"><h2>${direct ? 'Add countries' : 'Ask for countries'}</h2>
<form class="stacked" method="post" action="${keyPath(k.id, '/countries')}">
  ${csrfField(ctx)}
  <label for="countries">Countries to add (ISO 3166-1 alpha-2 codes, e.g. DE, ES)
  <input id="countries" name="countries" required value="${problem?.form === 'countries' ? problem.value : ''}"${invalid(problem, 'countries', 'countries')}></label>
  ${fieldMessage('countries', problem, 'countries')}
  <div><button type="submit">${direct ? 'Add them now' : 'Send the request'}</button></div>
</form>
<p class="muted">${direct ? 'The same key covers them at once.' : 'Your provider approves or declines the request; the same key covers them once approved.'}</p></section>`;
}

function tierForm(ctx: PortalContext, k: HolderKey, policy: SelfServicePolicy, problem?: FormProblem): SafeHtml {
  if (k.tier === 'advanced' && problem?.form !== 'tier') return html``;
  const direct = policy.tier === 'direct';
  return html`<section class="change" id="change-tier"><h2>${direct ? 'Upgrade' : 'Ask for an upgrade'}</h2>
<form class="stacked" method="post" action="${keyPath(k.id, '/tier')}">
  ${csrfField(ctx)}
  <label for="tier">Tier <select id="tier" name="tier"${invalid(problem, 'tier', 'tier')}><option value="advanced">Advanced (adds the insights area)</option></select></label>
  ${fieldMessage('tier', problem, 'tier')}
  <div><button type="submit">${direct ? 'Upgrade now' : 'Send the request'}</button></div>
</form>
<p class="muted">${direct ? 'The same key covers the insights area at once.' : 'Your provider approves or declines the request.'}</p></section>`;
}

/** The changes the policy allows a holder on this key (none on a revoked key, none when read-only). */
export function changeForms(ctx: PortalContext, k: HolderKey, policy: SelfServicePolicy, readOnly: string | undefined, problem?: FormProblem): SafeHtml {
  if (readOnly) return html`<p class="muted" id="read-only">${readOnly}</p>`;
  if (k.status === 'revoked') return html``;
  return html`
${policy.roll || policy.revoke ? html`<div class="actions">
  ${policy.roll ? html`<form method="post" action="${keyPath(k.id, '/roll')}">${csrfField(ctx)}<input type="hidden" name="version" value="${k.updatedAt}"><button type="submit" class="secondary" id="roll">Roll the value</button></form>` : ''}
  ${policy.revoke ? html`<a class="button danger" href="${keyPath(k.id, '/revoke')}" id="revoke">Revoke…</a>` : ''}
</div>
${policy.roll ? html`<p class="muted">Rolling gives a new value, shown once; the current one keeps working for ${Math.round(policy.rollGraceSeconds / 60)} minutes.</p>` : ''}` : ''}
${policy.addresses ? addressesForm(ctx, k, policy, problem) : ''}
${policy.countries !== 'off' ? countriesForm(ctx, k, policy, problem) : ''}
${policy.tier !== 'off' ? tierForm(ctx, k, policy, problem) : ''}`;
}
