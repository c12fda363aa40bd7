import { html, type SafeHtml } from '../html';

/** A key's leak mark as pages show it (from the record: when, where it was found, whether the value was ended). */
export interface LeakMark {
  readonly leakedAt: string;
  readonly url?: string;
  readonly valueEndedAt?: string;
}

/** Where the leak was found: a link when it is a web address (GitHub's report gives one), else the text. */
const where = (url: string | undefined): SafeHtml =>
  url === undefined ? html`` : /^https:\/\//.test(url) ? html` at <a href="${url}" rel="noopener noreferrer nofollow" id="leak-url">${url}</a>` : html` at <code id="leak-url">${url}</code>`;

/**
 * The notice above a leaked key's record, on the holder's page and the operator's: what was found
 * and when, whether the value still works, and `roll` (the page's way to roll, or the words saying
 * who can). Never the value itself.
 */
export function leakNotice(m: LeakMark, roll: SafeHtml): SafeHtml {
  const state = m.valueEndedAt
    ? html`The value stopped working at ${m.valueEndedAt}, on every gateway.`
    : html`The value may still work until the key is rolled.`;
  return html`<section class="notice error" role="alert" id="key-leak">
<p><strong>This key's value was found in public</strong>, reported on ${m.leakedAt}${where(m.url)}. ${state}</p>
<p>Rolling gives the key a new value (shown once; the leaked one gets no grace) and keeps its id, account and entitlements. ${roll}</p>
</section>`;
}
