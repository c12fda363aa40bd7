/**
 * Real processes for the integration suites: the data service and gateways (port 0, via
 * `startProcess`), and a Stack (a data service, its keys / config / listings files and one or more
 * gateways against it) that stops everything it started.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { fixtureListings, type FixtureListing } from '../fixtures/listings';
import { checkAnswersOf } from './answer-conformance';
import {
  cursorSecret, DEFAULT_TIERS, KIT_INSIGHTS_SECRET, writeGatewayConfig, writeKeysFile, writeListingsFile, type KeySpec, type Tier, type TierLimits,
} from './keys-files';
import { runToExit, startProcess, type RunningProcess } from './processes';
import { writeTempFile } from './temp-files';

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
  /** Environment every gateway of this stack gets, under its own (e.g. a Redis stack's REDIS_URL). */
  protected baseEnv: Record<string, string> = {};

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
    return startGateway({ backendUrl: this.backendUrl, keysFile: this.keysFile, gatewayConfig: this.gatewayConfig, cursorSecret: this.secret, env: { ...this.baseEnv, ...env } });
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
