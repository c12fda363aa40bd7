/**
 * The new surfaces on and off, side by side (part of the cost curves: CURVES=surfaces; alone
 * `npm run bench:surfaces`): gateways on one Redis (counters and key store) and data service,
 * the first page (20 listings) at c=10, all taking turns in 1 s rounds (on-off.ts), the median
 * round of each against the gateway with everything off answering uncompressed:
 *
 *   - compression per coding at the level of answers made per request (codecs.ts DYNAMIC_LEVELS:
 *     zstd 1, br 1, gzip 3), the same gateway asked with each Accept-Encoding;
 *   - traces sampled at 0 and at 1 (parentbased_traceidratio, exporting http/protobuf to a local
 *     sink that takes everything: edges.ts);
 *   - the key holders' portal on (portal.ts), the providers' listener with Stripe on (hooks.ts);
 *   - a second gateway with everything off: the difference two like processes show (the rows of
 *     other processes are within that noise or not).
 *
 * The detail of each (levels, bytes, GCs, hooks in-process) stays in edges.ts, portal.ts, hooks.ts.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { DYNAMIC_LEVELS, OFFERED } from '../gateway/compression/codecs';
import { loadGatewayConfig } from '../gateway/config/gateway-config';
import { createKeyAdmin } from '../gateway/keys/key-admin';
import { ROOT, type RunningProcess } from '../test/kit/processes';
import { startSink } from './edges';
import { startGateway as startWithHooks } from './hooks';
import { benchKeysFile, CONNECTIONS, onOffTable, onVsOff, runAlone, takeTurns } from './on-off';
import { startGateway as startWithPortal } from './portal';

export interface SurfaceRow { name: string; short: string; rps: number; p99: number; cpuUs: number }
export interface SurfacesResult { connections: number; rounds: number; loadBefore: number; loadAfter: number; rows: SurfaceRow[] }

export async function runSurfaces(options: { redisUrl: string; backendUrl: string; seconds: number }): Promise<SurfacesResult> {
  const loadBefore = loadavg()[0]!;
  const keyValue = `bench-surfaces-${randomBytes(12).toString('hex')}`;
  const keys = benchKeysFile('bench-surfaces', keyValue);
  const redis = new Redis(options.redisUrl);
  await createKeyAdmin(redis, loadGatewayConfig(path.join(ROOT, 'config/gateway.yaml'))).import(keys);
  redis.disconnect();
  const env = { BACKEND_URL: options.backendUrl, KEYS_FILE: keys, REDIS_URL: options.redisUrl, KEY_STORE: 'redis' };
  const sink = await startSink();
  const otel = (ratio: string): Record<string, string> => ({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ratio });
  const started: RunningProcess[] = [];
  try {
    const plain = await startWithPortal(env, false);
    started.push(plain);
    const turns: Array<{ name: string; short: string; p: RunningProcess; headers: Record<string, string> }> = [
      { name: 'all off, uncompressed (reference)', short: 'off', p: plain, headers: { 'accept-encoding': 'identity' } },
      ...OFFERED.map((coding) => ({ name: `compression ${coding} ${DYNAMIC_LEVELS[coding]}`, short: `${coding} ${DYNAMIC_LEVELS[coding]}`, p: plain, headers: { 'accept-encoding': coding } })),
    ];
    // A second gateway with everything off: how far two like processes differ (the noise floor of the rows below).
    const control = await startWithPortal(env, false);
    started.push(control);
    turns.push({ name: 'all off, a second process (control)', short: 'off, control', p: control, headers: { 'accept-encoding': 'identity' } });
    for (const [ratio, label] of [['0', '0'], ['1', '1']] as const) {
      const p = await startWithPortal(otel(ratio), false);
      started.push(p);
      turns.push({ name: `traces sampled at ${label}`, short: `traces ${label}`, p, headers: {} });
    }
    const portal = await startWithPortal(env, true);
    const hooks = await startWithHooks(env, true);
    started.push(portal, hooks);
    turns.push({ name: 'portal on', short: 'portal', p: portal, headers: {} }, { name: "providers' listener (Stripe) on", short: 'hooks', p: hooks, headers: {} });
    const medians = await takeTurns(turns.map((t) => t.p), turns.map((t) => t.name), keyValue, options.seconds, turns.map((t) => t.headers));
    const rows = turns.map((t, i) => ({ name: t.name, short: t.short, ...medians[i]! }));
    return { connections: CONNECTIONS, rounds: options.seconds, loadBefore, loadAfter: loadavg()[0]!, rows };
  } finally {
    await Promise.all(started.map((p) => p.stop()));
    await sink.close();
  }
}

export function renderSurfaces(r: SurfacesResult): string {
  const off = r.rows[0]!;
  return `${onOffTable(r, `${r.rows.length - OFFERED.length} (the reference one asked with each coding too)`, 'vs all off, uncompressed', (row) => (row === off ? '—' : onVsOff(row, off)))}Load average ${r.loadBefore.toFixed(1)} before, ${r.loadAfter.toFixed(1)} after.\n`;
}

if (require.main === module) {
  runAlone('surfaces', 'The new surfaces on and off', async (options) => renderSurfaces(await runSurfaces(options)));
}
