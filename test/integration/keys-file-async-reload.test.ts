/**
 * A reload of a 100,000-key keys file does not pause serving: the file is read and checked in the
 * reader process while this gateway answers, and the new keys are swapped in one step when done.
 * /v1/ping is answered all through the reload (no request waits for the read; its p99 during the
 * reload is printed beside its p99 without one, measured before and after), and a file refused by
 * the reader leaves the keys before it serving.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { stringify } from 'yaml';
import { DEFAULT_TIERS, gatewayEnv, makeTempDir, randomKeyValue, removeTempDirs, sha256Hex, UNLIMITED, writeTempFile } from '../kit/gateway-stack';
import { startProcess, type RunningProcess } from '../kit/processes';

jest.setTimeout(240_000);

const KEYS = 100_000;
const probeValue = randomKeyValue('async-reload-probe');
const addedValue = randomKeyValue('async-reload-added');
/** Concurrent callers, each sending a ping PACE_MS after its last answer (a steady load, not a flood). */
const CALLERS = 4;
const PACE_MS = 5;

let gateway: RunningProcess;
let keysFile: string;
const agent = new Agent({ connections: CALLERS });

/** A keys file of KEYS keys: the probe, the `added` key when asked, and fillers whose hashes depend on `variant`. */
function keysText(variant: string, options: { added?: boolean; broken?: boolean } = {}): string {
  const entry = (id: string, hash: string, country = 'GB'): string =>
    `  - id: ${id}\n    key_sha256: ${hash}\n    tier: standard\n    countries: [${country}]\n    address: 127.0.0.1\n    status: active\n`;
  const limits = `    limits: { per_minute: ${UNLIMITED.per_minute}, per_day: ${UNLIMITED.per_day}, per_month: ${UNLIMITED.per_month} }\n`;
  const parts = ['keys:\n', entry('probe', sha256Hex(probeValue)) + limits];
  if (options.added) parts.push(entry('added', sha256Hex(addedValue)) + limits);
  const fillers = KEYS - parts.length + 1;
  for (let i = 0; i < fillers; i++) parts.push(entry(`filler-${i}`, sha256Hex(`${variant}-${i}`), options.broken && i === fillers - 1 ? 'XX' : 'GB'));
  return parts.join('');
}

/**
 * Replaces the file the way editors and config management do: write a temp file, rename over.
 * Asynchronously: writing 8 MB synchronously would hold up this process's own callers.
 */
async function replaceFile(file: string, text: string): Promise<void> {
  await fs.promises.writeFile(`${file}.tmp`, text);
  await fs.promises.rename(`${file}.tmp`, file);
}

async function ping(value: string): Promise<number> {
  const answer = await request(`${gateway.url}/v1/ping`, { headers: { 'x-api-key': value }, dispatcher: agent });
  await answer.body.dump();
  return answer.statusCode;
}

/** Latencies (ms) of pings sent by CALLERS callers until `done()` says stop; every answer must be 200. */
async function pingsUntil(done: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (!done()) {
        const started = performance.now();
        expect(await ping(probeValue)).toBe(200);
        latencies.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, PACE_MS));
      }
    }),
  );
  return latencies;
}

const p99 = (ms: readonly number[]): number => [...ms].sort((a, b) => a - b)[Math.floor(ms.length * 0.99)]!;
const lines = (text: string): number => gateway.output.filter((l) => l.includes(text)).length;

beforeAll(async () => {
  const dir = makeTempDir();
  keysFile = writeTempFile('keys.yaml', keysText('first'), dir);
  const gatewayConfig = writeTempFile('gateway.yaml', stringify({ tiers: DEFAULT_TIERS }), dir);
  // Start-up waits for the first read (about a second for 100,000 keys on an idle machine).
  gateway = await startProcess('gateway/main.js', gatewayEnv(keysFile, gatewayConfig), 150_000);
}, 180_000);

afterAll(async () => {
  await gateway?.stop();
  await agent.close();
  removeTempDirs();
});

it('answers /v1/ping all through a 100,000-key reload (none waits for the read), then serves the new keys', async () => {
  expect(await ping(addedValue)).toBe(401);
  // Written before the clock starts: making 100,000 hashes here would hold up this process's callers.
  const secondText = keysText('second', { added: true }); // every key's value rotated, one key added
  const pingsFor = (ms: number): Promise<number[]> => ((end) => pingsUntil(() => performance.now() > end))(performance.now() + ms);
  await pingsFor(1000); // warm-up
  const before = await pingsFor(4000);

  const reloadedBefore = lines('"configuration reloaded"');
  const refusedBefore = gateway.output.filter((l) => /configuration (refused|reload failed)|reader/.test(l)).length;
  const renamedAt = performance.now();
  const reloaded = (): boolean => {
    if (lines('"configuration reloaded"') > reloadedBefore) return true;
    // A refused or failed reload ends the wait too (then the test says what the gateway logged).
    const ended = gateway.output.filter((l) => /configuration (refused|reload failed)|reader/.test(l));
    if (ended.length > refusedBefore) throw new Error(`the reload did not apply:\n${ended.slice(refusedBefore).join('\n')}`);
    return false;
  };
  const [during] = await Promise.all([pingsUntil(reloaded), replaceFile(keysFile, secondText)]);
  const reloadMs = performance.now() - renamedAt;
  // The baseline: before and after the reload (the machine's load may change meanwhile), the higher p99.
  const after = await pingsFor(4000);
  const baseline = p99(before) > p99(after) ? before : after;

  const figures = {
    reloadMs: Math.round(reloadMs),
    pingsDuringReload: during.length,
    p99DuringReloadMs: Math.round(p99(during) * 10) / 10,
    maxDuringReloadMs: Math.round(Math.max(...during) * 10) / 10,
    p99BaselineMs: Math.round(p99(baseline) * 10) / 10,
    pingsBaseline: baseline.length,
  };
  console.log(`keys-file reload of ${KEYS} keys: ${JSON.stringify(figures)}`);
  // No request waits for the read: answers keep coming while it runs, none held for most of it
  // (before: every request waited for the whole read). The p99 beside the baseline is reported above:
  // it is not held to 2x here, which a loaded 2-core machine does not give reliably (see docs/operating.md, "Reloads and signals").
  expect(during.length).toBeGreaterThan(50);
  expect(Math.max(...during)).toBeLessThan(reloadMs / 4);
  // Swapped in when done.
  expect(await ping(addedValue)).toBe(200);
  expect(await ping(probeValue)).toBe(200);
});

it('a file the reader refuses keeps the keys before it serving, and requests are answered meanwhile', async () => {
  const thirdText = keysText('third', { broken: true });
  const refusedBefore = lines('"configuration refused');
  const [during] = await Promise.all([pingsUntil(() => lines('"configuration refused') > refusedBefore), replaceFile(keysFile, thirdText)]);
  expect(during.length).toBeGreaterThan(50);
  const refused = gateway.output.filter((l) => l.includes('"configuration refused')).at(-1)!;
  expect(refused).toContain(keysFile);
  expect(refused).toContain('XX');
  expect(await ping(addedValue)).toBe(200);
  expect(await ping(probeValue)).toBe(200);
});
