/**
 * The keys-file curve (part of `npm run bench:curves`, CURVES=keys-file; sizes CURVE_KEYS_FILE,
 * default 1,000 → 10,000 → 100,000 → 200,000): one YAML keys file per size, a fresh gateway on each
 * (memory counters, no Redis, as the file store runs on one instance), then:
 *   - start-up: from the process's launch to its listening line (the file read, parsed, checked and
 *     indexed before the port opens);
 *   - RSS idle: after start-up and a 1 s settle, before any request;
 *   - under load: all the sizes and the baseline take turns at c=10, requests spread over 1,000 of
 *     the file's keys: CPU per request and the highest RSS seen.
 * The point of the curve is where the file stops being sensible: start-up and memory grow with the
 * file, the cost of a request should not.
 */
import { createHash } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import type { RunningProcess } from '../test/kit/processes';
import { rssMb } from './proc-cpu';

export interface KeysFileRow {
  x: number;
  fileMb: number;
  startMs: number;
  rssIdleMb: number;
  gateway: { rps: number; cpuUs: number; p99: number; rssMb: number };
  baseline: { rps: number; cpuUs: number; p99: number; rssMb: number };
}

interface Target { url: string; pid: number; keys?: readonly string[] }
type Point = KeysFileRow['gateway'];

export interface KeysFileDeps {
  dir: string;
  page: string;
  baseline: Target;
  valueOf: (i: number) => string;
  start: (extra: Record<string, string>) => Promise<{ proc: RunningProcess; startMs: number }>;
  alternate: (targets: readonly Target[], connections: number) => Promise<Point[]>;
  stop: (p: RunningProcess) => Promise<void>;
  say: (line: string) => void;
}

const sha256 = (v: string): string => createHash('sha256').update(v).digest('hex');
const unlimited = { per_minute: 1_000_000_000, per_day: 1_000_000_000, per_month: 1_000_000_000 };

function writeKeysFile(dir: string, size: number, valueOf: (i: number) => string): string {
  const keys = Array.from({ length: size }, (_, i) => ({
    id: `f${i}`, key_sha256: sha256(valueOf(i)), tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: unlimited,
  }));
  const file = path.join(dir, `keys-file-${size}.yaml`);
  writeFileSync(file, stringify({ keys }));
  return file;
}

export async function keysFileCurve(sizes: readonly number[], d: KeysFileDeps): Promise<KeysFileRow[]> {
  const started: Array<{ proc: RunningProcess; startMs: number; rssIdleMb: number; fileMb: number; keys: string[] }> = [];
  try {
    for (const size of sizes) {
      const file = writeKeysFile(d.dir, size, d.valueOf);
      const gw = await d.start({ KEYS_FILE: file, KEY_STORE: 'file', REDIS_URL: '' });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const rssIdleMb = rssMb(gw.proc.child.pid!);
      const keys = Array.from({ length: Math.min(size, 1000) }, (_, i) => d.valueOf(Math.floor((i * size) / Math.min(size, 1000))));
      started.push({ ...gw, rssIdleMb, fileMb: statSync(file).size / 1e6, keys });
      d.say(`keys file ${size.toLocaleString('en')}: ${(statSync(file).size / 1e6).toFixed(1)} MB, start-up ${gw.startMs} ms, RSS idle ${rssIdleMb.toFixed(0)} MB`);
    }
    const targets = started.map((g) => ({ url: `${g.proc.url}/v1/properties?${d.page}`, pid: g.proc.child.pid!, keys: g.keys }));
    const points = await d.alternate([...targets, d.baseline], 10);
    const base = points[points.length - 1]!;
    return sizes.map((size, i) => {
      const g = started[i]!;
      d.say(`keys file ${size}: ${points[i]!.cpuUs.toFixed(0)} µs CPU/req (baseline ${base.cpuUs.toFixed(0)}), RSS under load ${points[i]!.rssMb.toFixed(0)} MB`);
      return { x: size, fileMb: g.fileMb, startMs: g.startMs, rssIdleMb: g.rssIdleMb, gateway: points[i]!, baseline: base };
    });
  } finally {
    for (const g of started) await d.stop(g.proc);
  }
}

export function renderKeysFile(rows: readonly KeysFileRow[]): string {
  return [
    '| keys in the file | file MB | start-up ms | RSS idle MB | RSS under load MB | gateway CPU µs/req | baseline CPU µs/req | × baseline CPU | × first size CPU |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.x.toLocaleString('en')} | ${r.fileMb.toFixed(1)} | ${r.startMs} | ${r.rssIdleMb.toFixed(0)} | ${r.gateway.rssMb.toFixed(0)} | ${r.gateway.cpuUs.toFixed(0)} | ${r.baseline.cpuUs.toFixed(0)} | ${(r.gateway.cpuUs / r.baseline.cpuUs).toFixed(2)} | ${(r.gateway.cpuUs / rows[0]!.gateway.cpuUs).toFixed(2)} |`),
    '',
  ].join('\n');
}
