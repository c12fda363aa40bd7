import { html, type SafeHtml } from '../../console/html';

/** Who is signed in (for the header) and the CSRF token every form carries. */
export interface PortalContext {
  holder?: { accountName: string; identity: string };
  csrf?: string;
}

export const csrfField = (ctx: PortalContext): SafeHtml => html`<input type="hidden" name="_csrf" value="${ctx.csrf ?? ''}">`;

/**
 * The portal's page shell: two stylesheets from this listener (the console's, shared, and the
 * portal's few additions), no script at all, a header with the navigation and the sign-out form.
 */
export function layout(title: string, ctx: PortalContext, content: SafeHtml): string {
  const nav = ctx.holder
    ? html`<nav aria-label="Portal">
        <a href="/portal/keys">Your keys</a>
        <a href="/portal/requests">Your requests</a>
      </nav>
      <span class="who">${ctx.holder.accountName} (${ctx.holder.identity})</span>
      <form method="post" action="/portal/sign-out">${csrfField(ctx)}<button type="submit" class="secondary">Sign out</button></form>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Listings API portal</title>
<link rel="stylesheet" href="/portal/assets/console.css">
<link rel="stylesheet" href="/portal/assets/portal.css">
</head>
<body>
<header class="top"><span class="brand">Listings API portal</span>${nav}</header>
<main>
<h1>${title}</h1>
${content}
</main>
</body>
</html>
`.text;
}

/** A message as a page: sign-in problems, refusals, not found. */
export function messagePage(ctx: PortalContext, title: string, message: string, kind: 'error' | 'info' = 'error', back?: { href: string; text: string }): string {
  return layout(title, ctx, html`
<p class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${message}</p>
${back ? html`<p><a href="${back.href}">${back.text}</a></p>` : ''}`);
}
