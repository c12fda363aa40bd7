import { html } from '../html';
import { layout } from './layout';

/** The sign-in form: one password field for an operator token (sent once, never stored). */
export function signInPage(error?: string): string {
  return layout('Sign in', {}, html`
${error ? html`<p class="notice error" role="alert">${error}</p>` : ''}
<form class="stacked" method="post" action="/console/sign-in">
  <label for="token">Operator token
    <input id="token" name="token" type="password" autocomplete="current-password" required>
  </label>
  <div><button type="submit">Sign in</button></div>
</form>
<p class="muted">An operator token from <code>ADMIN_TOKENS_FILE</code> (or <code>ADMIN_TOKEN</code>). What you may do depends on its role.</p>`);
}
