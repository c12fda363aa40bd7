// gateway/portal/pages/: the portal's HTML pages: sign-in, the holder's keys and requests, change forms, tables;
// the document shell is the console's (console/pages/page-shell.ts).
import { html, type SafeHtml } from '../../console/html';
import { pageShell, signedInNav } from '../../console/pages/page-shell';

/** Who is signed in (for the header) and the CSRF token every form carries. */
export interface PortalContext {
  holder?: { accountName: string; identity: string };
  csrf?: string;
}

export { csrfField } from '../../console/pages/page-shell';

const PORTAL_LINKS = [
  ['/portal/keys', 'Your keys'],
  ['/portal/requests', 'Your requests'],
] as const;

/**
 * The portal's page shell: two stylesheets from this listener (the console's, shared, and the
 * portal's few additions), no script at all, a header with the navigation and the sign-out form.
 */
export function layout(title: string, ctx: PortalContext, content: SafeHtml): string {
  const nav = ctx.holder
    ? signedInNav({ label: 'Portal', links: PORTAL_LINKS, who: `${ctx.holder.accountName} (${ctx.holder.identity})`, signOut: '/portal/sign-out', ...ctx })
    : '';
  const head = html`<link rel="stylesheet" href="/portal/assets/console.css">
<link rel="stylesheet" href="/portal/assets/portal.css">`;
  return pageShell({ title, brand: 'Listings API portal', head, nav, content });
}

/** A message as a page: sign-in problems, refusals, not found. */
export function messagePage(ctx: PortalContext, title: string, message: string, kind: 'error' | 'info' = 'error', back?: { href: string; text: string }): string {
  return layout(title, ctx, html`
<p class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${message}</p>
${back ? html`<p><a href="${back.href}">${back.text}</a></p>` : ''}`);
}
