/**
 * The client as a package, the way a consumer gets it: `npm pack` in client/ (which builds
 * client/dist with declarations), `npm install --offline` of the tarball into an empty temp
 * project (offline proves it needs nothing from a registry: no runtime dependencies), then the
 * installed package, not the sources, is used from CommonJS and ESM against a real gateway and
 * data service, and a TypeScript consumer is type-checked against the shipped declarations.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fixtureListings, publishedListings, sampleIds } from '../fixtures/listings';
import { makeTempDir, randomKeyValue, removeTempDirs, startStack, type KeySpec, type Stack } from '../kit/gateway-stack';

const ROOT = path.resolve(__dirname, '..', '..');
const CLIENT = path.join(ROOT, 'client');
const LISTINGS = fixtureListings();
const IDS = sampleIds(LISTINGS);
const KEYS: KeySpec[] = [{ id: 'consumer', value: randomKeyValue('consumer'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }];
const VERSION = (JSON.parse(fs.readFileSync(path.join(CLIENT, 'package.json'), 'utf8')) as { version: string }).version;

interface Run { code: number; stdout: string; stderr: string }

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env: { ...process.env, npm_config_update_notifier: 'false', ...env }, timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs a command that must succeed; on failure the assertion shows its output. */
async function ok(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const r = await run(cmd, args, cwd, env);
  if (r.code !== 0) expect({ cmd: [cmd, ...args].join(' '), ...r }).toEqual({ code: 0 });
  return r.stdout;
}

let stack: Stack;
let consumer: string;
let tarball: string;

beforeAll(async () => {
  const packDir = makeTempDir();
  consumer = makeTempDir();
  stack = await startStack({ keys: KEYS, listings: LISTINGS });
  await ok('npm', ['pack', '--pack-destination', packDir], CLIENT);
  tarball = path.join(packDir, `listings-client-${VERSION}.tgz`);
  fs.writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
  await ok('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], consumer);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  removeTempDirs();
});

const installed = (...parts: string[]): string => path.join(consumer, 'node_modules', 'listings-client', ...parts);

test('the tarball holds the built JavaScript and declarations, and nothing else of the sources', async () => {
  const listing = await ok('tar', ['-tzf', tarball], consumer);
  const files = listing.split('\n').filter(Boolean).map((f) => f.replace(/^package\//, '')).sort();
  expect(files).toEqual(expect.arrayContaining(['package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/listings-client.js', 'dist/schema.d.ts', 'dist/types.d.ts']));
  // No TypeScript sources, source maps or build state: only dist/*.js, dist/*.d.ts and package.json.
  for (const f of files) expect(f).toMatch(/^(package\.json|dist\/[\w-]+\.(js|d\.ts))$/);
});

test('installed offline: a dependency of the consumer, with no dependencies of its own', () => {
  const consumerPkg = JSON.parse(fs.readFileSync(path.join(consumer, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  expect(Object.keys(consumerPkg.dependencies ?? {})).toEqual(['listings-client']);
  const pkg = JSON.parse(fs.readFileSync(installed('package.json'), 'utf8')) as Record<string, unknown>;
  expect(pkg).toMatchObject({ name: 'listings-client', version: VERSION, main: 'dist/index.js', types: 'dist/index.d.ts' });
  expect(pkg.dependencies).toBeUndefined();
  // Only the client itself landed in node_modules.
  expect(fs.readdirSync(path.join(consumer, 'node_modules')).filter((n) => !n.startsWith('.'))).toEqual(['listings-client']);
});

test('CommonJS consumer: ping, one listing, every listing of a country across pages, a typed refusal', async () => {
  fs.writeFileSync(
    path.join(consumer, 'use.cjs'),
    `const { ListingsClient, ListingsApiError } = require('listings-client');
const client = new ListingsClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });
(async () => {
  const out = {};
  out.ping = await client.ping();
  out.one = await client.getProperty('GB', process.env.LISTING_ID);
  out.ids = [];
  out.pages = 0;
  for await (const page of client.listProperties({ country: 'GB', limit: 7 }).pages()) { out.pages++; for (const l of page.data) out.ids.push(l.id); }
  try { await client.getPropertiesPage({ country: 'DE' }); out.refusal = 'none'; }
  catch (err) { out.refusal = { typed: err instanceof ListingsApiError, error: err.error, status: err.status }; }
  process.stdout.write(JSON.stringify(out));
})().catch((err) => { console.error(err); process.exit(1); });
`,
  );
  const stdout = await ok('node', ['use.cjs'], consumer, { BASE_URL: stack.url, API_KEY: stack.key('consumer').value, LISTING_ID: IDS.publishedGb });
  const out = JSON.parse(stdout) as { ping: unknown; one: { id: string }; ids: string[]; pages: number; refusal: unknown };
  const gb = publishedListings(LISTINGS, { country: 'GB' });
  expect(out.ping).toEqual({ ip: '127.0.0.1', key_id: 'consumer', tier: 'standard' });
  expect(out.one).toEqual(gb.find((l) => l.id === IDS.publishedGb));
  expect([...out.ids].sort()).toEqual(gb.map((l) => l.id).sort());
  expect(out.pages).toBe(Math.ceil(gb.length / 7));
  expect(out.refusal).toEqual({ typed: true, error: 'country_not_entitled', status: 403 });
}, 60_000);

test('ESM consumer: named imports from the package work', async () => {
  fs.writeFileSync(
    path.join(consumer, 'use.mjs'),
    `import { ListingsClient, KNOWN_ERROR_CODES } from 'listings-client';
const client = new ListingsClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });
const ping = await client.ping();
process.stdout.write(JSON.stringify({ key: ping.key_id, knowsRateLimited: KNOWN_ERROR_CODES.includes('rate_limited') }));
`,
  );
  const stdout = await ok('node', ['use.mjs'], consumer, { BASE_URL: stack.url, API_KEY: stack.key('consumer').value });
  expect(JSON.parse(stdout)).toEqual({ key: 'consumer', knowsRateLimited: true });
}, 60_000);

test('TypeScript consumer: the shipped declarations type-check good use and refuse bad use', async () => {
  fs.writeFileSync(
    path.join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'CommonJS', moduleResolution: 'node', strict: true, noEmit: true,
        // The consumer's own @types/node (for fetch's types); borrowed from the repository, offline.
        typeRoots: [path.join(ROOT, 'node_modules', '@types')], types: ['node'],
      },
      include: ['use.ts'],
    }),
  );
  fs.writeFileSync(
    path.join(consumer, 'use.ts'),
    `import { ListingsApiError, ListingsClient, type Listing, type ListingPage, type CountryCode } from 'listings-client';
const client = new ListingsClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k' });
export async function use(): Promise<void> {
  const listing: Listing = await client.getProperty('GB', 'GB-P54W8ZS4');
  const id: string = listing.id;
  const page: ListingPage = await client.getPropertiesPage({ country: 'FR', listing_type: 'rent' });
  const next: string | null = page.next_cursor;
  const country: CountryCode = 'ES';
  try { await client.ping(); } catch (err) { if (err instanceof ListingsApiError) { const code: string = err.error; void code; } }
  // @ts-expect-error: not an ISO 3166-1 code the service accepts
  await client.getPropertiesPage({ country: 'XX' });
  // @ts-expect-error: listing_type is 'sale' | 'rent'
  await client.getPropertiesPage({ country: 'GB', listing_type: 'lease' });
  void id; void next; void country;
}
`,
  );
  const tsc = path.join(ROOT, 'node_modules', '.bin', 'tsc');
  const good = await run(tsc, ['-p', 'tsconfig.json'], consumer);
  expect(good).toEqual({ code: 0, stdout: '', stderr: '' });
  // And it is the declarations doing the work: a wrong type is an error naming the package's type.
  fs.writeFileSync(path.join(consumer, 'use.ts'), `import type { Listing } from 'listings-client';\nexport const n: number = ({} as Listing).id;\n`);
  const bad = await run(tsc, ['-p', 'tsconfig.json'], consumer);
  expect(bad.code).not.toBe(0);
  expect(bad.stdout).toMatch(/use\.ts\(2,14\): error TS2322: Type 'string' is not assignable to type 'number'/);
}, 60_000);
