import { html, type SafeHtml } from '../html';

/** The signed-in session's CSRF token as the hidden field every form carries (console and portal). */
export const csrfField = (ctx: { csrf?: string }): SafeHtml => html`<input type="hidden" name="_csrf" value="${ctx.csrf ?? ''}">`;

/** The header's navigation for a signed-in user: the links, who is signed in, and the sign-out form. */
export function signedInNav(p: { label: string; links: ReadonlyArray<readonly [href: string, text: string]>; who: string; signOut: string; csrf?: string }): SafeHtml {
  return html`<nav aria-label="${p.label}">
${p.links.map(([href, text]) => html`        <a href="${href}">${text}</a>
`)}      </nav>
      <span class="who">${p.who}</span>
      <form method="post" action="${p.signOut}">${csrfField(p)}<button type="submit" class="secondary">Sign out</button></form>`;
}

/**
 * The HTML document every console and portal page is: `head` (stylesheets, scripts from the
 * listener itself), a header with the brand and `nav`, and the page's title and content in `main`.
 */
export function pageShell(p: { title: string; brand: string; head: SafeHtml; nav: SafeHtml | ''; content: SafeHtml }): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${p.title} · ${p.brand}</title>
${p.head}
</head>
<body>
<header class="top"><span class="brand">${p.brand}</span>${p.nav}</header>
<main>
<h1>${p.title}</h1>
${p.content}
</main>
</body>
</html>
`.text;
}
