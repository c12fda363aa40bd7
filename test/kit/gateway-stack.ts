/**
 * Test kit for the gateway integration suites: temporary keys / gateway-config / listings files,
 * a real data service and one or more real gateways started against it (port 0, via
 * `startProcess`), a small HTTP client that can choose its local address and send repeated
 * headers, assertions for the contract's error answers, and stub upstreams.
 *
 * Key values live only in memory here: the keys file holds their SHA-256 (hex), never a value.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http, { type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib, { crc32 } from 'node:zlib';
import { stringify } from 'yaml';
import { ERROR_CATALOGUE, type ErrorCode } from '../../gateway/errors';
import { fixtureListings, type FixtureListing } from '../fixtures/listings';
import { ConformanceError, conformanceProblems } from './openapi-conformance';
import { runToExit, startProcess, type RunningProcess } from './processes';

export { ERROR_CATALOGUE, type ErrorCode };

// ---------------------------------------------------------------------------------------------
// Temporary files

const tempDirs: string[] = [];

/** A fresh directory under os.tmpdir(), removed by `removeTempDirs` (call it in afterAll). A Stack keeps its own. */
export function makeTempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-it-'));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

export function writeTempFile(name: string, text: string, dir = makeTempDir()): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

// ---------------------------------------------------------------------------------------------
// Keys

export type Tier = 'standard' | 'advanced';

export interface KeySpec {
  id: string;
  /** The key value the client sends; only its SHA-256 goes into the file. */
  value: string;
  tier: Tier;
  countries: string[];
  /** One address (the first release's field); or `addresses`. */
  address?: string;
  addresses?: string[];
  status: 'active' | 'paused' | 'revoked';
  pause_reason?: 'unpaid_renewal' | 'payment_dispute';
  limits?: { per_minute?: number; per_day?: number; per_month?: number };
  expires_at?: string;
  note?: string;
}

/** Values shorter than this (e.g. a 1-character imported key) are too common to search for in text. */
export const MIN_SEARCHABLE_SECRET = 12;

/** Limits no test reaches: for keys whose tests are about something else than limits. */
export const UNLIMITED = Object.freeze({ per_minute: 1_000_000, per_day: 10_000_000, per_month: 100_000_000 });

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

/** An "imported" key value (no project prefix): any format authenticates by its hash. */
export const randomKeyValue = (label = 'key'): string => `it-${label}-${randomBytes(18).toString('base64url')}`;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function base62(value: bigint, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = BASE62[Number(value % 62n)]! + out;
    value /= 62n;
  }
  return out;
}

/**
 * A key value in the project's generated format, computed independently of the gateway's code:
 * `plk_` + 43 base62 characters of 32 random bytes + 6 base62 characters of the CRC-32 of those 43.
 */
export function plkKeyValue(): string {
  const body = base62(BigInt(`0x${randomBytes(32).toString('hex')}`), 43);
  return `plk_${body}${base62(BigInt(crc32(body)), 6)}`;
}

/** The same value with its last checksum character changed: a `plk_` value whose checksum is wrong. */
export function withBadChecksum(value: string): string {
  const last = value[value.length - 1]!;
  const replacement = BASE62[(BASE62.indexOf(last) + 1) % 62]!;
  return value.slice(0, -1) + replacement;
}

export function keysFileText(keys: readonly KeySpec[]): string {
  const records = keys.map((k) => {
    const record: Record<string, unknown> = {
      id: k.id,
      key_sha256: sha256Hex(k.value),
      tier: k.tier,
      countries: k.countries,
      ...(k.address !== undefined ? { address: k.address } : {}),
      ...(k.addresses !== undefined ? { addresses: k.addresses } : {}),
      status: k.status,
    };
    if (k.pause_reason) record.pause_reason = k.pause_reason;
    if (k.limits) record.limits = k.limits;
    if (k.expires_at !== undefined) record.expires_at = k.expires_at;
    if (k.note !== undefined) record.note = k.note;
    return record;
  });
  return stringify({ keys: records });
}

/** Writes a temp keys file (hashes only) and returns its path. */
export function writeKeysFile(keys: readonly KeySpec[], dir = makeTempDir()): string {
  const file = writeTempFile('keys.yaml', keysFileText(keys), dir);
  const text = fs.readFileSync(file, 'utf8');
  for (const k of keys) {
    if (k.value.length >= MIN_SEARCHABLE_SECRET && text.includes(k.value)) throw new Error(`kit bug: key value of ${k.id} written to the keys file`);
  }
  return file;
}

export interface TierLimits {
  per_minute: number;
  per_day: number;
  per_month: number;
}

export const DEFAULT_TIERS: Record<Tier, TierLimits> = {
  standard: { per_minute: 1000, per_day: 100_000, per_month: 1_000_000 },
  advanced: { per_minute: 1000, per_day: 100_000, per_month: 1_000_000 },
};

/**
 * The unauthenticated budget of the kit's gateways: the suites send floods of unknown keys from
 * one address on purpose, and expect 401s; the budget's own suite sets a small one.
 */
export const KIT_REFUSED_AUTH_PER_MINUTE = 1_000_000;

/** Writes a temp gateway config (tier defaults) and returns its path. */
export function writeGatewayConfig(tiers: Record<Tier, TierLimits> = DEFAULT_TIERS, dir = makeTempDir(), refusedAuthPerMinute = KIT_REFUSED_AUTH_PER_MINUTE): string {
  return writeTempFile('gateway.yaml', stringify({ tiers, refused_authentication: { per_address_per_minute: refusedAuthPerMinute } }), dir);
}

/** Writes listings as a JSON array (or NDJSON) and returns the path. */
export function writeListingsFile(listings: readonly unknown[], format: 'json' | 'ndjson' = 'json', dir = makeTempDir()): string {
  const text = format === 'json' ? JSON.stringify(listings) : listings.map((l) => JSON.stringify(l)).join('\n') + '\n';
  return writeTempFile(format === 'json' ? 'listings.json' : 'listings.ndjson', text, dir);
}

/** The kit gateways' INSIGHTS_IDENTITY_SECRET (required when a suite configures insights). */
export const KIT_INSIGHTS_SECRET = randomBytes(32).toString('base64url');

/** base64url of 32 random bytes: a valid CURSOR_SECRET. */
export const cursorSecret = (): string => randomBytes(32).toString('base64url');

// ---------------------------------------------------------------------------------------------
// Processes

export interface Proc extends RunningProcess {
  /** Resolves once the process has exited and its stdout/stderr are fully read. */
  closed: Promise<void>;
}

function track(p: RunningProcess): Proc {
  // Attached while the process is running (it has just logged "listening"), so 'close' is not missed.
  const closed = new Promise<void>((resolve) => p.child.once('close', () => resolve()));
  return Object.assign(p, { closed });
}

export async function startBackend(listingsFile: string): Promise<Proc> {
  return track(await startProcess('backend-mock/main.js', { BACKEND_PORT: '0', LISTINGS_FILE: listingsFile, LOG_LEVEL: 'info' }));
}

export interface GatewayOptions {
  backendUrl: string;
  keysFile: string;
  gatewayConfig: string;
  cursorSecret?: string;
  env?: Record<string, string>;
}

export async function startGateway(o: GatewayOptions): Promise<Proc> {
  return checkAnswersOf(track(
    await startProcess('gateway/main.js', {
      PORT: '0',
      HOST: '127.0.0.1',
      BACKEND_URL: o.backendUrl,
      KEYS_FILE: o.keysFile,
      GATEWAY_CONFIG: o.gatewayConfig,
      CURSOR_SECRET: o.cursorSecret ?? cursorSecret(),
      INSIGHTS_IDENTITY_SECRET: KIT_INSIGHTS_SECRET,
      LOG_LEVEL: 'info',
      ...o.env,
    }),
  ));
}

// ---------------------------------------------------------------------------------------------
// Response conformance: every answer `send()` gets from a gateway's public port, to a path under
// `/v1` or `/docs`, is checked against openapi/openapi.yaml (test/kit/openapi-conformance.ts).

const publicGatewayPorts = new Set<number>();
const unconformingThisTest: string[] = [];

/**
 * Checks every answer from this gateway's public port against the document (gateways started by
 * the kit are registered already). Call it for a gateway started by other means.
 */
export function checkAnswersOf<T extends { port: number; child?: { once(event: 'exit', f: () => void): unknown } }>(gateway: T): T {
  publicGatewayPorts.add(gateway.port);
  gateway.child?.once('exit', () => publicGatewayPorts.delete(gateway.port));
  return gateway;
}

// A test that swallows a rejected `send()` still fails: the problems are reported after it.
if (typeof afterEach === 'function') {
  afterEach(() => {
    const problems = unconformingThisTest.splice(0);
    if (problems.length) throw new ConformanceError(problems);
  });
}

/** The environment of a gateway that would start, for `runToExit` start-up failure tests. */
export function gatewayEnv(keysFile: string, gatewayConfig: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    BACKEND_URL: 'http://127.0.0.1:9',
    KEYS_FILE: keysFile,
    GATEWAY_CONFIG: gatewayConfig,
    CURSOR_SECRET: cursorSecret(),
    INSIGHTS_IDENTITY_SECRET: KIT_INSIGHTS_SECRET,
    LOG_LEVEL: 'info',
    ...extra,
  };
}

export { runToExit };

export interface StackOptions {
  keys: KeySpec[];
  /** Listings for the data service (default: the fixture). Ignored when `backendUrl` is given. */
  listings?: readonly FixtureListing[] | readonly unknown[];
  /** Use this upstream instead of starting a data service. */
  backendUrl?: string;
  /** How the listings file is written (the data service reads both). */
  listingsFormat?: 'json' | 'ndjson';
  tiers?: Record<Tier, TierLimits>;
  /** The gateways' unauthenticated budget (default: KIT_REFUSED_AUTH_PER_MINUTE); null: none in the file (the gateway's default). */
  refusedAuthPerMinute?: number | null;
  /** One entry per gateway to start (default: one gateway with no extra environment). */
  gateways?: Array<Record<string, string>>;
  cursorSecret?: string;
}

/**
 * A data service and gateways against it. `gateways[0]` is the main one (`url`). `stop()` stops every
 * process (idempotent) and removes the temp files; gateway output stays readable afterwards.
 */
export class Stack {
  readonly gateways: Proc[] = [];
  backend?: Proc;
  backendUrl = '';
  keysFile = '';
  gatewayConfig = '';
  readonly secret: string;
  private readonly keyById = new Map<string, KeySpec>();
  private stopped = false;
  private dir = '';

  constructor(readonly options: StackOptions) {
    this.secret = options.cursorSecret ?? cursorSecret();
    for (const k of options.keys) this.keyById.set(k.id, k);
  }

  get url(): string {
    return this.gateways[0]!.url;
  }

  get gateway(): Proc {
    return this.gateways[0]!;
  }

  key(id: string): KeySpec {
    const k = this.keyById.get(id);
    if (!k) throw new Error(`no key ${id} in this stack`);
    return k;
  }

  /** `{ 'x-api-key': value }` for a key id. */
  auth(id: string): Record<string, string> {
    return { 'x-api-key': this.key(id).value };
  }

  /** Every key value of this stack (for the log check). */
  keyValues(): string[] {
    return [...this.keyById.values()].map((k) => k.value);
  }

  async start(): Promise<this> {
    const dir = (this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-it-stack-')));
    this.keysFile = writeKeysFile(this.options.keys, dir);
    this.gatewayConfig =
      this.options.refusedAuthPerMinute === null
        ? writeTempFile('gateway.yaml', stringify({ tiers: this.options.tiers ?? DEFAULT_TIERS }), dir)
        : writeGatewayConfig(this.options.tiers, dir, this.options.refusedAuthPerMinute);
    if (this.options.backendUrl) {
      this.backendUrl = this.options.backendUrl;
    } else {
      const listingsFile = writeListingsFile(this.options.listings ?? fixtureListings(), this.options.listingsFormat ?? 'json', dir);
      this.backend = await startBackend(listingsFile);
      this.backendUrl = this.backend.url;
    }
    const envs = this.options.gateways ?? [{}];
    const results = await Promise.allSettled(envs.map((env) => this.launchGateway(env)));
    for (const r of results) if (r.status === 'fulfilled') this.gateways.push(r.value);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return this;
  }

  /** Starts one more gateway against the same data service and keys; it is stopped with the stack. */
  async startGateway(env: Record<string, string> = {}): Promise<Proc> {
    const g = await this.launchGateway(env);
    this.gateways.push(g);
    return g;
  }

  private launchGateway(env: Record<string, string>): Promise<Proc> {
    return startGateway({ backendUrl: this.backendUrl, keysFile: this.keysFile, gatewayConfig: this.gatewayConfig, cursorSecret: this.secret, env });
  }

  /** All lines every gateway of this stack wrote. */
  gatewayOutput(): string[] {
    return this.gateways.flatMap((g) => g.output);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.all(this.gateways.map(async (g) => { await g.stop(); await g.closed; }));
    if (this.backend) {
      await this.backend.stop();
      await this.backend.closed;
    }
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const stack = new Stack(options);
  try {
    return await stack.start();
  } catch (err) {
    await stack.stop().catch(() => undefined);
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP client

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface SendOptions {
  method?: string;
  /** An array value sends the header once per element (e.g. two `x-api-key` lines). */
  headers?: OutgoingHttpHeaders;
  /** Local address to connect from (127.0.0.2 and 127.0.0.1 are both loopback on Linux). */
  localAddress?: string;
  /** Host to connect to instead of the base URL's (e.g. '::1'). */
  host?: string;
  timeoutMs?: number;
}

/**
 * One request on a fresh connection. `path` is sent exactly as given (no normalisation), so
 * `%2e%2e` or odd query strings reach the gateway untouched. An answer from a gateway's public
 * port to a path under `/v1` or `/docs` that departs from openapi/openapi.yaml rejects with a
 * ConformanceError naming every difference.
 */
/** An answer's body as the gateway meant it: node:http does not decode a Content-Encoding (the gateway compresses when asked). */
function decodedBody(raw: Buffer, coding: string | undefined): Buffer {
  if (coding === 'gzip') return zlib.gunzipSync(raw);
  if (coding === 'br') return zlib.brotliDecompressSync(raw);
  if (coding === 'zstd') return (zlib as unknown as { zstdDecompressSync(b: Buffer): Buffer }).zstdDecompressSync(raw);
  return raw;
}

export function send(baseUrl: string, requestPath: string, options: SendOptions = {}): Promise<Answer> {
  const base = new URL(baseUrl);
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise<Answer>((resolve, reject) => {
    const req = http.request(
      {
        host: options.host ?? base.hostname.replace(/^\[|\]$/g, ''),
        port: Number(base.port),
        method: options.method ?? 'GET',
        path: requestPath,
        headers: options.headers,
        agent: false,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          clearTimeout(timer);
          let text: string;
          try {
            text = decodedBody(Buffer.concat(chunks), res.headers['content-encoding']).toString('utf8');
          } catch (err) {
            reject(err);
            return;
          }
          let body: unknown;
          if (/^application\/json/i.test(res.headers['content-type'] ?? '')) {
            try {
              body = JSON.parse(text);
            } catch {
              body = undefined;
            }
          }
          const answer: Answer = { status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, text, body };
          let problems: string[] = [];
          try {
            if (publicGatewayPorts.has(Number(base.port))) {
              const requestHeadBytes = Buffer.byteLength(requestPath) + Object.entries(options.headers ?? {}).reduce((n, [k, v]) => n + k.length + Buffer.byteLength(String(v)) + 4, 0);
              problems = conformanceProblems({ method: options.method ?? 'GET', path: requestPath, status: answer.status, headers: answer.headers, text, requestHeadBytes });
            }
          } catch (err) {
            reject(err);
            return;
          }
          if (problems.length) {
            unconformingThisTest.push(...problems);
            reject(new ConformanceError(problems));
          } else {
            resolve(answer);
          }
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${timeoutMs} ms: ${options.method ?? 'GET'} ${requestPath}`));
    }, timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}

/** GET with a key (by value). */
export const getWithKey = (baseUrl: string, requestPath: string, keyValue: string, options: SendOptions = {}): Promise<Answer> =>
  send(baseUrl, requestPath, { ...options, headers: { 'x-api-key': keyValue, ...options.headers } });

// ---------------------------------------------------------------------------------------------
// Assertions

/** The headers every answer must (not) carry. */
export function expectCommonHeaders(a: Answer): void {
  expect(a.headers['x-powered-by']).toBeUndefined();
  expect(a.headers['x-request-id']).toEqual(expect.stringMatching(/\S/));
}

/**
 * Asserts an error answer of the contract: status of the code, JSON, body exactly
 * `{error, message}` plus `extras`, `Cache-Control: no-store`, no `X-Powered-By`, `Retry-After` on
 * 429/503 (whole seconds, ≥ 1), `Allow: GET` on 405. Returns the body.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function expectError(a: Answer, code: ErrorCode, extras: Record<string, unknown> = {}): any {
  const status = ERROR_CATALOGUE[code].status;
  expect({ status: a.status, body: a.body ?? a.text }).toEqual({
    status,
    body: { error: code, message: expect.any(String), ...extras },
  });
  expect(Object.keys(a.body).sort()).toEqual(['error', 'message', ...Object.keys(extras)].sort());
  expect((a.body as { message: string }).message.length).toBeGreaterThan(0);
  expect(a.headers['content-type']).toMatch(/^application\/json/);
  expect(a.headers['cache-control']).toBe('no-store');
  expectCommonHeaders(a);
  if (status === 429 || status === 503) expectRetryAfter(a);
  if (status === 405) expect(a.headers.allow).toBe('GET');
  return a.body;
}

/** `Retry-After` present, whole seconds, at least 1. Returns the number. */
export function expectRetryAfter(a: Answer): number {
  const value = a.headers['retry-after'];
  expect(value).toEqual(expect.stringMatching(/^[0-9]+$/));
  const seconds = Number(value);
  expect(seconds).toBeGreaterThanOrEqual(1);
  return seconds;
}

/** Successful keyed answer: 200, JSON, rate-limit headers, request id. */
export function expectKeyedSuccess(a: Answer): void {
  expect({ status: a.status, body: a.body ?? a.text }).toEqual({ status: 200, body: expect.anything() });
  expect(a.headers['content-type']).toMatch(/^application\/json/);
  expect(a.headers['ratelimit-policy']).toEqual(expect.stringMatching(/\S/));
  expect(a.headers.ratelimit).toEqual(expect.stringMatching(/\S/));
  expectCommonHeaders(a);
}

/** The `r=` (remaining) of one window in a `RateLimit` header, e.g. `"day";r=1;t=5000`. */
export function remainingIn(a: Answer, window: 'minute' | 'day' | 'month'): number | undefined {
  const header = a.headers.ratelimit;
  if (typeof header !== 'string') return undefined;
  const m = new RegExp(`"?${window}"?;r=(\\d+)`).exec(header);
  return m ? Number(m[1]) : undefined;
}

/** Every property name anywhere in a JSON value. */
export function allPropertyNames(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) allPropertyNames(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.add(k);
      allPropertyNames(v, out);
    }
  }
  return out;
}

/**
 * Lines of `lines` that contain any of `secrets`, as written or JSON-escaped (as a log line would
 * hold it). Secrets shorter than MIN_SEARCHABLE_SECRET are skipped.
 */
export function linesWithSecrets(lines: readonly string[], secrets: readonly string[]): string[] {
  const needles = secrets
    .filter((s) => s.length >= MIN_SEARCHABLE_SECRET)
    .flatMap((s) => [s, JSON.stringify(s).slice(1, -1), encodeURIComponent(s)]);
  return lines.filter((line) => needles.some((n) => line.includes(n)));
}

/**
 * Stops the stack and checks its gateways' output: requests were logged (so the check below saw a
 * real log, not an empty capture), and no line holds any of its key values.
 */
export async function expectNoKeyValueLogged(stack: Stack): Promise<void> {
  await stack.stop();
  const lines = stack.gatewayOutput();
  expect(lines.some((line) => line.includes('"msg":"answered"'))).toBe(true);
  expect(linesWithSecrets(lines, stack.keyValues())).toEqual([]);
}

// ---------------------------------------------------------------------------------------------
// Time

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Limits use UTC calendar minutes (and days, which start on a minute boundary): wait for the next
 * minute when fewer than `marginMs` are left, so a short sequence of requests stays in one window.
 */
export async function awayFromMinuteEdge(marginMs = 5000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await sleep(left + 100);
}

/**
 * Polls `/v1/ping` with `value` on every instance until each answers `status`; returns the ms it
 * took after `since` (a key change made at `since`). Throws after `timeoutMs`.
 */
export async function seenByAll(urls: readonly string[], value: string, status: number, since: number, timeoutMs = 5000): Promise<number> {
  await Promise.all(urls.map(async (url) => {
    for (;;) {
      if ((await getWithKey(url, '/v1/ping', value)).status === status) return;
      if (Date.now() - since > timeoutMs) throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms`);
      await sleep(10);
    }
  }));
  return Date.now() - since;
}

// ---------------------------------------------------------------------------------------------
// Stub upstreams (in the test process)

export interface StubRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
}

export interface Stub {
  url: string;
  port: number;
  requests: StubRequest[];
  close(): Promise<void>;
}

/** A node:http server on 127.0.0.1:0 answering with `handler` (which may never answer). */
export async function startStub(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Stub> {
  const requests: StubRequest[] = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawHeaders: req.rawHeaders });
    req.resume();
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A TCP port that was free a moment ago and has nothing listening on it now. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A port on 127.0.0.1 where connections are refused: a privileged port nothing listens on (no test
 * process can bind it, so no race with parallel suites), else a port that was free a moment ago.
 */
export async function refusedPort(): Promise<number> {
  for (const port of [1, 9, 47]) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return port;
  }
  return closedPort();
}

/** True when this host can bind and connect over IPv6 loopback. */
export async function ipv6LoopbackWorks(): Promise<boolean> {
  const server = http.createServer((_req, res) => res.end('ok'));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '::1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    const a = await send(`http://127.0.0.1:${port}`, '/', { host: '::1', timeoutMs: 2000 });
    return a.text === 'ok';
  } catch {
    return false;
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
