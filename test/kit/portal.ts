/**
 * Test kit for the key holders' portal: gateways with the portal on over one Redis key store,
 * accounts and keys made the way operators make them, and a small HTTP client for the portal's
 * pages and forms (cookies, Origin, CSRF token, local address).
 */
import http from 'node:http';
import pino from 'pino';
import { stringify } from 'yaml';
import fs from 'node:fs';
import { createRedisHolderStores } from '../../gateway/requests/holder-stores';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin } from '../../gateway/keys/key-admin';
import { connectRedis, whenReady, type RedisClient } from '../../gateway/redis/connect';
import { parseRedisTopology } from '../../gateway/config/redis-env';
import { DEFAULT_TIERS, KIT_REFUSED_AUTH_PER_MINUTE, UNLIMITED } from './gateway-stack';
import { freePort } from './redis-server';

export interface PortalAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  location?: string;
}

export interface PortalRequest {
  method?: 'GET' | 'POST';
  cookie?: string;
  /** The Origin header; undefined: none sent. */
  origin?: string;
  referer?: string;
  /** URL-encoded body fields; an array value repeats the field. */
  form?: Record<string, string | string[]>;
  localAddress?: string;
}

export function encodeForm(form: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) for (const v of Array.isArray(value) ? value : [value]) params.append(name, v);
  return params.toString();
}

/** One request to a portal (no redirects followed). */
export function portalRequest(baseUrl: string, path: string, r: PortalRequest = {}): Promise<PortalAnswer> {
  const base = new URL(baseUrl);
  const body = r.form ? encodeForm(r.form) : undefined;
  const headers: Record<string, string> = {};
  if (r.cookie) headers.cookie = r.cookie;
  if (r.origin !== undefined) headers.origin = r.origin;
  if (r.referer !== undefined) headers.referer = r.referer;
  if (body !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: Number(base.port), method: r.method ?? (body ? 'POST' : 'GET'), path, headers, agent: false, ...(r.localAddress ? { localAddress: r.localAddress } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), ...(res.headers.location ? { location: res.headers.location } : {}) }));
      res.on('error', reject);
    });
    req.setTimeout(15_000, () => req.destroy(new Error(`portal request timed out: ${path}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The session cookie a sign-in answer set (`lgw_portal=…`). */
export function sessionCookie(a: PortalAnswer): string {
  const set = ([] as string[]).concat(a.headers['set-cookie'] ?? []);
  const line = set.find((c) => c.startsWith('lgw_portal='));
  if (!line) throw new Error(`no session cookie in the answer (${a.status}): ${a.text.slice(0, 300)}`);
  return line.split(';')[0]!;
}

/** The CSRF token in a page's forms. */
export function csrfIn(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('no CSRF field on the page');
  return m[1]!;
}

/** A holder signed in on one portal: their cookie and CSRF token, and a way to post a form as from the portal. */
export interface Holder {
  cookie: string;
  csrf: string;
}

export async function signInWithLink(baseUrl: string, publicUrl: string, token: string, localAddress?: string): Promise<PortalAnswer> {
  return portalRequest(baseUrl, '/portal/link', { form: { token }, origin: publicUrl, ...(localAddress ? { localAddress } : {}) });
}

export async function holderFromLink(baseUrl: string, publicUrl: string, token: string): Promise<Holder> {
  const answer = await signInWithLink(baseUrl, publicUrl, token);
  if (answer.status !== 303) throw new Error(`link sign-in answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  const cookie = sessionCookie(answer);
  const page = await portalRequest(baseUrl, '/portal/keys', { cookie });
  return { cookie, csrf: csrfIn(page.text) };
}

/** Posts a form as the holder, from the portal's origin, with the CSRF token. */
export function postAs(h: Holder, baseUrl: string, publicUrl: string, path: string, form: Record<string, string | string[]> = {}): Promise<PortalAnswer> {
  return portalRequest(baseUrl, path, { cookie: h.cookie, origin: publicUrl, form: { _csrf: h.csrf, ...form } });
}

/** The environment that turns the portal on for one gateway (a free port; the public URL given or its own). */
export async function portalEnv(publicUrl?: string): Promise<Record<string, string> & { PORTAL_PORT: string; PORTAL_PUBLIC_URL: string }> {
  const port = await freePort();
  return { PORTAL_PORT: String(port), PORTAL_HOST: '127.0.0.1', PORTAL_PUBLIC_URL: publicUrl ?? `http://127.0.0.1:${port}` };
}

/** Writes a gateway config with the kit's tiers and this `portal.self_service`. */
export function writePortalConfig(file: string, selfService: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): void {
  fs.writeFileSync(file, stringify({ tiers: DEFAULT_TIERS, refused_authentication: { per_address_per_minute: KIT_REFUSED_AUTH_PER_MINUTE }, portal: { self_service: selfService }, ...extra }));
}

/** The operator's side on the Redis key store: accounts, keys naming them, one-time links. */
export async function operatorOf(redisUrl: string, gatewayConfigFile: string) {
  const redis: RedisClient = connectRedis(parseRedisTopology({ REDIS_URL: redisUrl, REDIS_COMMAND_TIMEOUT_MS: 5000 })!, pino({ level: 'silent' }), 'test', { autoPipelining: false });
  if (!(await whenReady(redis, 10_000))) throw new Error('test Redis client not ready');
  const admin = createKeyAdmin(redis, loadGatewayConfig(gatewayConfigFile));
  const holders = createRedisHolderStores(redis, admin);
  return {
    redis,
    admin,
    accounts: holders.accounts,
    links: holders.linkTokens,
    requests: holders.requests,
    /** A Standard GB key from 127.0.0.1 naming `account` (undefined: an operator's key no holder sees). */
    async key(id: string, account: string | undefined, fields: Record<string, unknown> = {}): Promise<string> {
      return (await admin.create({ id, tier: 'standard', countries: ['GB'], address: '127.0.0.1', ...(account ? { account } : {}), ...UNLIMITED, ...fields })).key;
    },
    close: () => redis.disconnect(),
  };
}

/** Waits for `check` to hold, polling; throws with `what` after `timeoutMs`. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 10_000, everyMs = 25): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
