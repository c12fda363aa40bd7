import { html, type SafeHtml } from '../html';

export interface PageContext {
  /** Signed in: name and role for the header, and the CSRF token every form carries. */
  operator?: { name: string; role: string };
  csrf?: string;
}

/** A hidden CSRF field for a form (the session's token). */
export const csrfField = (ctx: PageContext): SafeHtml => html`<input type="hidden" name="_csrf" value="${ctx.csrf ?? ''}">`;

/**
 * The page shell: one stylesheet and one script, both from this listener (the CSP allows nothing
 * else), a header with the navigation and the sign-out form, and the page's content in `main`.
 */
export function layout(title: string, ctx: PageContext, content: SafeHtml): string {
  const nav = ctx.operator
    ? html`<nav aria-label="Console">
        <a href="/console/keys">Keys</a>
        <a href="/console/accounts">Accounts</a>
        <a href="/console/requests">Requests</a>
        <a href="/console/audit">Audit log</a>
        <a href="/console/reports/monthly">Monthly report</a>
      </nav>
      <span class="who">${ctx.operator.name} (${ctx.operator.role})</span>
      <form method="post" action="/console/sign-out">${csrfField(ctx)}<button type="submit" class="secondary">Sign out</button></form>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Listings gateway console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>
</head>
<body>
<header class="top"><span class="brand">Listings gateway console</span>${nav}</header>
<main>
<h1>${title}</h1>
${content}
</main>
</body>
</html>
`.text;
}
