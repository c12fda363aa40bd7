import type { KeyView } from '../../keys/key-admin';
import { html, type SafeHtml } from '../html';
import { csrfField, type PageContext } from './layout';

/** Each pause reason in an operator's words: why the key is paused, and what settles it. */
export const REASON_NOTES: Record<string, { why: string; settles: string }> = {
  unpaid_renewal: { why: 'the renewal is unpaid', settles: 'settled when the payment is recorded (by the billing system, or Settle here)' },
  payment_dispute: { why: 'a payment is disputed', settles: 'settled when the dispute is won or closed (by the billing system, or Settle here)' },
  leaked: { why: 'the key\'s value leaked', settles: 'only a roll clears it: no settle does' },
  operator: { why: 'an operator paused it', settles: 'settled by an operator (Settle here)' },
};

const noteOf = (reason: string) => (Object.hasOwn(REASON_NOTES, reason) ? REASON_NOTES[reason]! : { why: reason, settles: '' });

/** A paused key's reasons, each with what settles it; an unpaid renewal links its open invoice when the record has one. */
export function pauseReasonList(k: KeyView): SafeHtml {
  const reasons = k.status === 'paused' ? (k.pause_reasons ?? []) : [];
  if (!reasons.length) return html``;
  return html`<ul id="pause-reasons">${reasons.map((r) => html`<li data-reason="${r}"><code>${r}</code>: ${noteOf(r).why}; ${noteOf(r).settles}.${
    r === 'unpaid_renewal' && k.billing_invoice_url ? html` <a id="invoice-link" href="${k.billing_invoice_url}" rel="noopener noreferrer">The open invoice</a>` : ''
  }</li>`)}</ul>`;
}

/**
 * The settle buttons of a paused key: one per reason a settle may clear, and "Settle (resume)"
 * (every reason) unless the key leaked, which only a roll clears.
 */
export function settleForms(ctx: PageContext, k: KeyView, action: string): SafeHtml {
  const reasons = k.pause_reasons ?? [];
  const settleable = reasons.filter((r) => r !== 'leaked');
  const form = (reason: string | undefined, label: string) =>
    html`<form method="post" action="${action}">${csrfField(ctx)}${reason ? html`<input type="hidden" name="reason" value="${reason}">` : ''}<button type="submit">${label}</button></form>`;
  return html`${settleable.length > 1 ? settleable.map((r) => form(r, `Settle ${r}`)) : ''}${
    reasons.includes('leaked') ? html`<span class="muted">Leaked: only a roll clears it.</span>` : form(undefined, 'Settle (resume)')
  }`;
}
