/**
 * The `/v1` path with the key holders' portal on and off (issue 24: "the /v1 path costs the same
 * with the portal on"). Pairs of gateways on the same data, one with `PORTAL_PORT` and
 * `PORTAL_PUBLIC_URL` set and one without: embedded (memory counters, YAML keys) and on Redis
 * (counters and key store in one Redis). The portal of each "on" gateway is checked to answer
 * before the measure. All four take turns in 1 s rounds at concurrency 10 on the same first page
 * (20 listings); each reports its median round (req/s, p99, and gateway CPU µs per request from
 * /proc), so a slow moment of the shared machine does not land on one only.
 *
 * Part of `npm run bench` (run.ts); alone: `npm run bench:portal` (starts its own Redis and data service).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import Redis from 'ioredis';
import { loadGatewayConfig } from '../gateway/config/gateway-config';
import { createKeyAdmin } from '../gateway/keys/key-admin';
import { ROOT, startProcess, type RunningProcess } from '../test/kit/processes';
import { benchKeysFile, CONNECTIONS, listeningPort, onOffTable, onVsOff, runAlone, takeTurns } from './on-off';
import { drainOutput } from './proc-cpu';

export interface PortalRow { name: string; portal: boolean; rps: number; p99: number; cpuUs: number }
export interface PortalResult { connections: number; rounds: number; rows: PortalRow[] }

/** A gateway with `env`; with `portal`, its portal on and checked to answer (surfaces.ts too). */
export async function startGateway(env: Record<string, string>, portal: boolean): Promise<RunningProcess> {
  const portalEnv: Record<string, string> = portal ? { PORTAL_PORT: '0', PORTAL_PUBLIC_URL: 'http://127.0.0.1:8083' } : {};
  const p = await startProcess('gateway/main.js', { PORT: '0', LOG_LEVEL: 'info', CURSOR_SECRET: randomBytes(32).toString('base64url'), GATEWAY_CONFIG: path.join(ROOT, 'config/gateway.yaml'), ...env, ...portalEnv }, 60_000);
  if (portal) {
    const port = await listeningPort(p, 'portal listening');
    const answer = await fetch(`http://127.0.0.1:${port}/portal/sign-in`, { redirect: 'manual' });
    if (answer.status !== 200) throw new Error(`the portal answered ${answer.status} on /portal/sign-in`);
  }
  return drainOutput(p);
}

export async function runPortal(options: { redisUrl: string; backendUrl: string; seconds: number }): Promise<PortalResult> {
  const keyValue = `bench-portal-${randomBytes(12).toString('hex')}`;
  const keys = benchKeysFile('bench-portal', keyValue);
  const redis = new Redis(options.redisUrl);
  await createKeyAdmin(redis, loadGatewayConfig(path.join(ROOT, 'config/gateway.yaml'))).import(keys);
  redis.disconnect();
  const embedded = { BACKEND_URL: options.backendUrl, KEYS_FILE: keys };
  const onRedis = { ...embedded, REDIS_URL: options.redisUrl, KEY_STORE: 'redis' };
  const specs: Array<[string, Record<string, string>, boolean]> = [
    ['embedded, portal off', embedded, false],
    ['embedded, portal on', embedded, true],
    ['Redis counters + key store, portal off', onRedis, false],
    ['Redis counters + key store, portal on', onRedis, true],
  ];
  const started: RunningProcess[] = [];
  try {
    for (const [, env, portal] of specs) started.push(await startGateway(env, portal));
    const medians = await takeTurns(started, specs.map(([name]) => name), keyValue, options.seconds);
    const rows = specs.map(([name, , portal], i) => ({ name, portal, ...medians[i]! }));
    return { connections: CONNECTIONS, rounds: options.seconds, rows };
  } finally {
    await Promise.all(started.map((p) => p.stop()));
  }
}

export function renderPortal(r: PortalResult): string {
  const off = (row: PortalRow): PortalRow => r.rows.find((o) => !o.portal && row.name.startsWith(o.name.split(', portal')[0]!))!;
  return onOffTable(r, 'four', 'portal on vs off', (row) => (row.portal ? onVsOff(row, off(row)) : '—'));
}

if (require.main === module) {
  runAlone('portal', '/v1 with the portal on and off', async (options) => renderPortal(await runPortal(options)));
}
