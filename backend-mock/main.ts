/**
 * Entry point of the listings data service: reads the environment (the only place that does),
 * loads LISTINGS_FILE or generates the deterministic data set, indexes it and listens.
 *
 *   BACKEND_PORT    port to listen on (default 8081; 0 picks a free port)
 *   BACKEND_HOST    address to bind (default 127.0.0.1: an internal service, not for the outside)
 *   LISTINGS_FILE   JSON array or NDJSON of listings; when unset, listings are generated
 *   LISTINGS_COUNT  how many listings to generate (default 120000; ignored with LISTINGS_FILE)
 *   LOG_LEVEL       pino level (default info; debug logs one line per request)
 *
 * Once listening it logs one JSON line with msg "listening" and the bound `port`; launchers
 * parse that line, which is how port 0 works without races. Start-up problems (bad environment,
 * bad data file, port taken) print one line on stderr and exit 1: they are operator errors, and a
 * stack trace would only bury the message.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import { LOG_FORMAT } from '../gateway/log-format';
import { parseTracingEnv, type TracingConfig } from '../gateway/config/otel-env';
import { ConfigError as TracingConfigError } from '../gateway/config/config-error';
import { startTracing, type Tracing } from '../gateway/tracing/start-tracing';
import { DEFAULT_LISTINGS_COUNT, generateListings } from './generate';
import type { StoredListing } from './listing';
import { ListingIndex } from './listing-index';
import { ListingsFileError, loadListingsFile } from './load-file';
import { createBackendServer } from './server';

/** A bad environment variable; the message is the whole stderr line. */
class ConfigError extends Error {}

interface BackendConfig {
  port: number;
  host: string;
  listingsFile: string | undefined;
  listingsCount: number;
  logLevel: string;
  /** Traces: the standard OTEL_* variables, as the gateway reads them (service name listings-data-service). */
  tracing: TracingConfig | undefined;
}

/** Upper bound on generated listings: far above any benchmark, low enough to stay in memory. */
const MAX_LISTINGS_COUNT = 5_000_000;
/** A stuck client must not keep a stopping process alive for long. */
const SHUTDOWN_GRACE_MS = 5_000;

/** An unset or empty variable both mean "use the default", as shells and compose files differ. */
function setting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integerSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = setting(env, name);
  if (raw === undefined) return fallback;
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max)) throw new ConfigError(`${name}: must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return value;
}

function readConfig(env: NodeJS.ProcessEnv): BackendConfig {
  const levels = [...Object.keys(pino.levels.values), 'silent'];
  const logLevel = setting(env, 'LOG_LEVEL') ?? 'info';
  if (!levels.includes(logLevel)) throw new ConfigError(`LOG_LEVEL: must be one of ${levels.join(', ')}, got ${JSON.stringify(logLevel)}`);
  return {
    port: integerSetting(env, 'BACKEND_PORT', 8081, 0, 65535),
    host: setting(env, 'BACKEND_HOST') ?? '127.0.0.1',
    listingsFile: setting(env, 'LISTINGS_FILE'),
    listingsCount: integerSetting(env, 'LISTINGS_COUNT', DEFAULT_LISTINGS_COUNT, 0, MAX_LISTINGS_COUNT),
    logLevel,
    tracing: parseTracingEnv(env, 'listings-data-service'),
  };
}

function fail(message: string): void {
  process.stderr.write(`${message}\n`);
  process.exitCode = 1;
}

/** Set once the server exists; a signal before then simply ends the process. */
let running: { server: Server; logger: Logger; tracing?: Tracing } | undefined;
let stopping = false;

function stop(signal: NodeJS.Signals): void {
  if (stopping) return;
  stopping = true;
  if (running === undefined || !running.server.listening) process.exit(0);
  const { server, logger } = running;
  logger.info({ signal }, 'stopping');
  // close() stops accepting and drops idle keep-alive sockets; in-flight answers still finish.
  server.close(() => void (running?.tracing?.shutdown(2_000) ?? Promise.resolve()).finally(() => process.exit(0)));
  server.closeIdleConnections();
  setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
}

async function main(): Promise<void> {
  const started = performance.now();
  // Handlers go in first: a signal that arrives while listings are still being generated is then
  // handled (once start-up yields to the event loop) instead of killing the process outright.
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);

  let config: BackendConfig;
  let listings: StoredListing[];
  try {
    config = readConfig(process.env);
    listings = config.listingsFile !== undefined ? loadListingsFile(config.listingsFile) : generateListings(config.listingsCount);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof TracingConfigError || error instanceof ListingsFileError) return fail(error.message);
    throw error;
  }
  const { host, port: requestedPort, listingsFile } = config;

  // Synchronous stdout: the "listening" line must be out before a launcher gives up waiting,
  // and log volume at info level is tiny.
  // One line format for both services: level by name, time in epoch ms (gateway/log-format.ts).
  const logger = pino(
    { name: 'backend-mock', base: { service: 'listings' }, level: config.logLevel, ...LOG_FORMAT },
    pino.destination({ dest: 1, sync: true }),
  );
  const index = new ListingIndex(listings);
  const tracing = await startTracing(config.tracing, (count, reason) => logger.debug({ count, reason }, 'spans dropped'));
  const server = createBackendServer(index, logger, tracing?.serverSpans);
  running = { server, logger, ...(tracing ? { tracing } : {}) };

  server.once('error', (error) => {
    fail(`backend-mock: cannot listen on ${host}:${requestedPort}: ${error.message}`);
    process.exit();
  });
  server.listen(requestedPort, host, () => {
    const { port } = server.address() as AddressInfo;
    // CPU time beside wall time: on a busy machine only the former says how heavy start-up is.
    const cpu = process.cpuUsage();
    logger.info({
      port,
      host,
      listings: index.size,
      published: index.publishedCount,
      source: listingsFile ?? 'generated',
      startup_ms: Math.round(performance.now() - started),
      startup_cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
    }, 'listening');
  });
}

void main();
