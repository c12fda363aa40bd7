// gateway/console/pages/: the console's HTML pages, each a function of its data: keys, accounts, requests, audit,
// reports, sign-in, errors; page-shell.ts is the document shared with the portal.
import { html, type SafeHtml } from '../html';
import { pageShell, signedInNav } from './page-shell';

export interface PageContext {
  /** Signed in: name and role for the header, and the CSRF token every form carries. */
  operator?: { name: string; role: string };
  csrf?: string;
}

export { csrfField } from './page-shell';

const CONSOLE_LINKS = [
  ['/console/keys', 'Keys'],
  ['/console/accounts', 'Accounts'],
  ['/console/requests', 'Requests'],
  ['/console/audit', 'Audit log'],
  ['/console/reports/monthly', 'Monthly report'],
] as const;

/**
 * The page shell: one stylesheet and one script, both from this listener (the CSP allows nothing
 * else), a header with the navigation and the sign-out form, and the page's content in `main`.
 */
export function layout(title: string, ctx: PageContext, content: SafeHtml): string {
  const nav = ctx.operator
    ? signedInNav({ label: 'Console', links: CONSOLE_LINKS, who: `${ctx.operator.name} (${ctx.operator.role})`, signOut: '/console/sign-out', ...ctx })
    : '';
  const head = html`<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>`;
  return pageShell({ title, brand: 'Listings gateway console', head, nav, content });
}
