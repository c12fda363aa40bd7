/**
 * An in-process gateway: `createGateway` (gateway/app.ts) with real parts and memory twins — the
 * file key store loaded from a real keys file, memory counters, a real cursor codec, the
 * unauthenticated budget, and the memory listing store of memory-listings.ts — listening on a
 * loopback port of the test process. Its public answers are checked against the OpenAPI document
 * as a process gateway's are.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createGateway, type AppDeps } from '../../gateway/app';
import { systemClock, type Clock } from '../../gateway/clock';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createCursorCodec } from '../../gateway/cursor/cursor-codec';
import { createFileKeyStore } from '../../gateway/keys/file-key-store';
import { loadKeysFile } from '../../gateway/keys/keys-file';
import { createMemoryCounters, type MemoryCounters } from '../../gateway/limits/memory-counters';
import { createMetrics } from '../../gateway/ops/metrics';
import { createRefusedAuthBudget } from '../../gateway/limits/refused-auth-table';
import { fixtureListings } from '../fixtures/listings';
import { checkAnswersOf } from './answer-conformance';
import {
  cursorSecret, DEFAULT_TIERS, KIT_REFUSED_AUTH_PER_MINUTE, writeGatewayConfig, writeKeysFile, type KeySpec, type Tier, type TierLimits,
} from './keys-files';
import { createMemoryListings, insightsNotConfigured, singleStore, type MemoryListings, type StoredListing } from './memory-listings';
import { makeTempDir } from './temp-files';

export interface InProcessOptions {
  keys: KeySpec[];
  tiers?: Record<Tier, TierLimits>;
  /** The unauthenticated budget per address and minute (default: KIT_REFUSED_AUTH_PER_MINUTE). */
  refusedAuthPerMinute?: number;
  /** What the memory listing store holds (default: the fixture). */
  listings?: readonly StoredListing[];
  /** CIDRs of trusted reverse proxies (default none). */
  trustedProxies?: string[];
  /**
   * What "now" is for the request's way, the memory counters and the unauthenticated budget
   * (default: the system clock). A test clock (test-clock.ts) lets a suite choose the instant.
   */
  clock?: Clock;
  /** Replaces some dependencies, given the ones built (e.g. a part wrapped to throw on demand). */
  override?: (built: AppDeps) => Partial<AppDeps>;
}

export interface InProcessGateway {
  url: string;
  port: number;
  /** What the gateway was built with (the memory twins included). */
  deps: AppDeps;
  listings: MemoryListings;
  counters: MemoryCounters;
  /** Every log line the gateway wrote. */
  logLines: string[];
  close(): Promise<void>;
}

/** The dependencies of an in-process gateway, from real files and memory twins. */
export function buildGatewayDeps(options: InProcessOptions, logLines: string[] = []): { deps: AppDeps; listings: MemoryListings; counters: MemoryCounters } {
  const dir = makeTempDir();
  const config = loadGatewayConfig(writeGatewayConfig(options.tiers ?? DEFAULT_TIERS, dir, options.refusedAuthPerMinute ?? KIT_REFUSED_AUTH_PER_MINUTE));
  const listings = createMemoryListings(options.listings ?? fixtureListings());
  const clock = options.clock ?? systemClock;
  const counters = createMemoryCounters(clock);
  const deps: AppDeps = {
    logger: pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) }),
    metrics: createMetrics({ redis: false }),
    keyStore: createFileKeyStore(loadKeysFile(writeKeysFile(options.keys, dir), config), clock),
    counters,
    cursors: createCursorCodec({ encryptionSecret: cursorSecret(), ttlSeconds: 3600 }),
    stores: singleStore(listings),
    insights: insightsNotConfigured(),
    refusedAuth: createRefusedAuthBudget(config.refusedAuthPerMinute ?? KIT_REFUSED_AUTH_PER_MINUTE, undefined, clock),
    trustedProxies: options.trustedProxies ?? [],
    clock,
  };
  return { deps: { ...deps, ...options.override?.(deps) }, listings, counters };
}

/** Builds an in-process gateway and listens on 127.0.0.1:0. Remove its temp files with `removeTempDirs`. */
export async function buildGateway(options: InProcessOptions): Promise<InProcessGateway> {
  const logLines: string[] = [];
  const { deps, listings, counters } = buildGatewayDeps(options, logLines);
  const server = http.createServer(createGateway(deps));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const gateway: InProcessGateway = {
    url: `http://127.0.0.1:${port}`,
    port,
    deps,
    listings,
    counters,
    logLines,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return checkAnswersOf(gateway);
}
