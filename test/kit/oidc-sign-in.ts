/**
 * Signing in to the portal through the kit's OpenID provider (oidc-provider.mjs) over plain HTTP,
 * as a browser would without scripts: the portal's /portal/login, the provider's authorization
 * endpoint, its login form, and back to the portal's callback, following redirects and keeping
 * each origin's cookies. No browser needed, so a suite can sign in as many identities as it likes.
 */
import http from 'node:http';
import path from 'node:path';
import { ROOT, startNodeScript, type RunningProcess } from './processes';

export const PROVIDER_CLIENT = { client_id: 'listings-portal', client_secret: 'portal-test-client-secret-0123456789' };

/** The provider, with `accounts` (login → its email claims), for a portal whose public URL is `publicUrl`. */
export function startOidcProvider(publicUrl: string, accounts: Record<string, { email: string; email_verified: unknown }>): Promise<RunningProcess> {
  return startNodeScript(path.join(ROOT, 'test', 'kit', 'oidc-provider.mjs'), {
    OIDC_CLIENT: JSON.stringify({ ...PROVIDER_CLIENT, redirect_uri: `${publicUrl}/portal/callback` }),
    OIDC_ACCOUNTS: JSON.stringify(accounts),
  });
}

/** The portal's environment for signing in with that provider. */
export const providerEnv = (provider: RunningProcess): Record<string, string> => ({
  PORTAL_OIDC_ISSUER: provider.url, PORTAL_OIDC_CLIENT_ID: PROVIDER_CLIENT.client_id, PORTAL_OIDC_CLIENT_SECRET: PROVIDER_CLIENT.client_secret, PORTAL_OIDC_ALLOW_HTTP: '1',
});

interface Answer {
  status: number;
  location?: string;
  cookies: string[];
  text: string;
}

function request(url: URL, cookie: string, form?: Record<string, string>): Promise<Answer> {
  const body = form ? new URLSearchParams(form).toString() : undefined;
  const headers: Record<string, string> = { ...(cookie ? { cookie } : {}), ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)), origin: url.origin } : {}) };
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: body === undefined ? 'GET' : 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({
        status: res.statusCode ?? 0, cookies: ([] as string[]).concat(res.headers['set-cookie'] ?? []), text: Buffer.concat(chunks).toString('utf8'),
        ...(res.headers.location ? { location: res.headers.location } : {}),
      }));
    });
    req.setTimeout(15_000, () => req.destroy(new Error(`request timed out: ${url.pathname}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Cookies per origin (paths ignored: sending a cookie to every path of its origin is harmless here). */
class Jar {
  private readonly byOrigin = new Map<string, Map<string, string>>();
  header(url: URL): string {
    return [...(this.byOrigin.get(url.origin) ?? new Map<string, string>())].map(([n, v]) => `${n}=${v}`).join('; ');
  }
  keep(url: URL, lines: string[]): void {
    const jar = this.byOrigin.get(url.origin) ?? new Map<string, string>();
    for (const line of lines) {
      const [pair, ...attributes] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (expired) jar.delete(name);
      else jar.set(name, pair!.slice(at + 1).trim());
    }
    this.byOrigin.set(url.origin, jar);
  }
  get(origin: string, name: string): string | undefined {
    return this.byOrigin.get(origin)?.get(name);
  }
}

export interface ProviderSignIn {
  /** The portal's last answer: 303 to /portal/keys when signed in, else the page that says why. */
  status: number;
  location?: string;
  text: string;
  /** The portal's session cookie (`lgw_portal=…`), when one was set. */
  cookie?: string;
}

/** Signs in to the portal at `publicUrl` as the provider's `login` (any password). */
export async function signInThroughProvider(publicUrl: string, login: string): Promise<ProviderSignIn> {
  const jar = new Jar();
  const portalOrigin = new URL(publicUrl).origin;
  let url = new URL('/portal/login', publicUrl);
  let form: Record<string, string> | undefined;
  for (let hop = 0; hop < 20; hop++) {
    const answer = await request(url, jar.header(url), form);
    jar.keep(url, answer.cookies);
    form = undefined;
    const back = url.origin === portalOrigin && url.pathname === '/portal/callback';
    if (back || (answer.status < 300 || answer.status >= 400) && url.origin === portalOrigin) {
      const session = jar.get(portalOrigin, 'lgw_portal');
      return { status: answer.status, text: answer.text, ...(answer.location ? { location: answer.location } : {}), ...(session ? { cookie: `lgw_portal=${session}` } : {}) };
    }
    if (answer.location) {
      url = new URL(answer.location, url);
      continue;
    }
    // The provider's login form: any password.
    const action = /<form[^>]*action="([^"]+)"/.exec(answer.text)?.[1];
    if (answer.status !== 200 || !action || !answer.text.includes('name="login"')) throw new Error(`unexpected answer from ${url.href} (${answer.status}): ${answer.text.slice(0, 300)}`);
    url = new URL(action.replace(/&amp;/g, '&'), url);
    form = { prompt: 'login', login, password: 'any' };
  }
  throw new Error('sign-in did not come back to the portal within 20 redirects');
}
