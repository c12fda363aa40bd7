import { html } from '../../console/html';
import { layout, type PortalContext } from './layout';

/** The sign-in page: the identity provider's button when configured, and what a one-time link is. */
export function signInPage(o: { oidc: boolean; message?: string }): string {
  return layout('Sign in', {}, html`
<div class="sign-in">
${o.message ? html`<p class="notice error" role="alert">${o.message}</p>` : ''}
${o.oidc
    ? html`<p>Sign in with your company account: the email address it verifies must be one of your account's addresses.</p>
<p><a class="button" href="/portal/login" id="oidc-sign-in">Sign in with your identity provider</a></p>`
    : ''}
<p>${o.oidc ? 'Or open' : 'Open'} the one-time sign-in link your provider sent you. A link signs in once and expires after at most an hour; ask for a new one when it has been used.</p>
</div>`);
}

/**
 * What a one-time link opens: a button that signs in. The link is not used by opening it (mail
 * scanners open links), only by this form's POST.
 */
export function linkPage(token: string): string {
  return layout('Sign in with your link', {}, html`
<div class="sign-in">
<p>This one-time link signs you in once, on this device.</p>
<form method="post" action="/portal/link">
  <input type="hidden" name="token" value="${token}">
  <button type="submit" id="link-sign-in">Sign in</button>
</form>
</div>`);
}

export const NO_ACCOUNT_MESSAGE = 'No account holds that email address (or the provider has not verified it), so you are not signed in. Ask your provider to add the address to your account.';
export const BAD_LINK_MESSAGE = 'That link is not valid: it was used already, it expired, or it was mistyped. Ask for a new one.';

export const tooManyPage = (seconds: number, what = 'failed sign-ins from your address'): string =>
  layout('Too many attempts', {} as PortalContext, html`<p class="notice error" role="alert">Too many ${what} in this minute. Try again in ${seconds} seconds.</p>`);
