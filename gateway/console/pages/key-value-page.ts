import { html } from '../html';
import { layout, type PageContext } from './layout';

/** A new key value, shown this once: the value, a copy button, and the warning. */
export function keyValuePage(ctx: PageContext, id: string, value: string, made: 'created' | 'rolled'): string {
  return layout(made === 'created' ? `Key ${id} created` : `Key ${id} rolled`, ctx, html`
<p class="notice warning" role="alert"><strong>Copy this value now: it will not be shown again.</strong> Only its hash is stored; if it is lost, roll the key.</p>
<p class="secret" id="key-value">${value}</p>
<p><button type="button" data-copy-target="key-value" data-copy-status="copy-status">Copy the value</button> <span id="copy-status" role="status"></span></p>
<p><a href="/console/keys/${encodeURIComponent(id)}">Go to the key</a></p>`);
}
