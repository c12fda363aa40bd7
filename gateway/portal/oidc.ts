import * as oidc from 'openid-client';
import { emailKey } from '../accounts/email-address';
import type { PortalOidcEnv } from '../config/portal-env';
import type { PendingLogin } from './pending-logins';

/** The identity a provider vouched for: the ID token's `email` (its compared form, email-address.ts) and whether it is verified. */
export interface OidcIdentity {
  readonly email: string;
  readonly emailVerified: boolean;
}

/**
 * OpenID Connect sign-in, authorization code with PKCE (S256), state and nonce, with `openid-client`
 * (v6). The provider is discovered once at start-up; the redirect URI is PORTAL_PUBLIC_URL/portal/callback.
 */
export interface OidcSignIn {
  /** A fresh sign-in: where to send the browser, and what the callback must find again. */
  begin(): Promise<{ url: string; pending: PendingLogin }>;
  /**
   * The callback: exchanges the code (checking state, PKCE and nonce) and reads the ID token's
   * claims. Throws on any mismatch or refusal (a tampered state or code never signs anyone in).
   */
  finish(callbackUrl: URL, pending: PendingLogin): Promise<OidcIdentity | undefined>;
}

export const CALLBACK_PATH = '/portal/callback';

export async function discoverOidc(env: PortalOidcEnv, publicUrl: string): Promise<OidcSignIn> {
  const config = await oidc.discovery(new URL(env.issuer), env.clientId, env.clientSecret, undefined, env.allowHttp ? { execute: [oidc.allowInsecureRequests] } : undefined);
  const redirectUri = `${publicUrl}${CALLBACK_PATH}`;
  return {
    async begin() {
      const pending: PendingLogin = { state: oidc.randomState(), codeVerifier: oidc.randomPKCECodeVerifier(), nonce: oidc.randomNonce() };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid email',
        code_challenge: await oidc.calculatePKCECodeChallenge(pending.codeVerifier),
        code_challenge_method: 'S256',
        state: pending.state,
        nonce: pending.nonce,
      });
      return { url: url.href, pending };
    },
    async finish(callbackUrl, pending) {
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        expectedState: pending.state,
        pkceCodeVerifier: pending.codeVerifier,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims || typeof claims.email !== 'string') return undefined;
      // Compared by the one rule (email-address.ts): never Unicode case mapping, which folds other
      // characters into ASCII ones (KELVIN SIGN into `k`) and would sign one identity in as another.
      return { email: emailKey(claims.email), emailVerified: claims.email_verified === true };
    },
  };
}
