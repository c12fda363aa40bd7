import type { KeyView } from '../../keys/key-admin';
import { html } from '../html';
import { csrfField, layout, type PageContext } from './layout';

export type ConfirmAction = 'pause' | 'roll' | 'revoke';

/** The confirmation of a destructive action: what it does, its options, and a Cancel way out. */
export function confirmPage(ctx: PageContext, key: KeyView, action: ConfirmAction): string {
  const back = `/console/keys/${encodeURIComponent(key.id)}`;
  const form = (body: ReturnType<typeof html>, button: string, danger = false) => html`
<form class="stacked" method="post" action="${back}/${action}">
  ${csrfField(ctx)}
  ${body}
  <div class="actions"><button type="submit"${danger ? html` class="danger"` : ''}>${button}</button> <a class="button secondary" href="${back}">Cancel</a></div>
</form>`;
  if (action === 'pause') {
    return layout(`Pause ${key.id}?`, ctx, html`
<p class="notice warning">Every request with this key will be refused with 403 <code>key_paused</code> until each of its pause reasons is settled${key.status === 'paused' ? html` (it is paused now for: ${(key.pause_reasons ?? []).join(', ')})` : ''}.</p>
${form(html`<label for="reason">Reason <select id="reason" name="reason">${['unpaid_renewal', 'payment_dispute', 'operator', 'leaked'].map((r) => html`<option value="${r}">${r}</option>`)}</select></label>`, 'Pause the key')}`);
  }
  if (action === 'roll') {
    return layout(`Roll ${key.id}?`, ctx, html`
<p class="notice warning">A new value is made and shown once. The current value keeps working for the grace period, then stops.</p>
${form(html`<label for="grace_seconds">Grace period for the current value, in seconds (0: it stops now) <input id="grace_seconds" name="grace_seconds" inputmode="numeric" value="86400" required></label>`, 'Roll the value', true)}`);
  }
  return layout(`Revoke ${key.id}?`, ctx, html`
<p class="notice warning">The key stops working everywhere at once. This cannot be undone.</p>
${form(html``, 'Revoke the key', true)}`);
}
