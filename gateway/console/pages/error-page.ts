import { html } from '../html';
import { layout, type PageContext } from './layout';

/** An error as a page: the catalogue code and the message (the same words the admin API uses). */
export function errorPage(ctx: PageContext, code: string, message: string, back = '/console/keys'): string {
  return layout('Not done', ctx, html`
<p class="notice error" role="alert"><strong>${code}</strong>: ${message}</p>
<p><a href="${back}">Back</a></p>`);
}
