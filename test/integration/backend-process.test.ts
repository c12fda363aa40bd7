/**
 * Runs the built data service (dist/backend-mock/main.js) as a real process, as the gateway and
 * the benchmarks do. Build first: `npx tsc -p tsconfig.json`.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, RunningProcess, runToExit, startProcess } from '../kit/processes';

const MAIN = 'backend-mock/main.js';
const dir = mkdtempSync(path.join(os.tmpdir(), 'backend-process-'));

beforeAll(() => {
  if (!existsSync(path.join(ROOT, 'dist', MAIN))) throw new Error(`dist/${MAIN} is missing: run \`npx tsc -p tsconfig.json\` first`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

interface Row {
  id: string;
  country: string;
  listing_type: string;
  property_type: string;
  withdrawn?: boolean;
  [field: string]: unknown;
}

/** 250 listings over GB and FR, every 7th withdrawn, with ids in scrambled order and an id that needs no escaping but looks odd. */
const records: Row[] = Array.from({ length: 250 }, (_, i) => ({
  id: `L-${((i * 7919) % 1000).toString().padStart(3, '0')}`,
  country: i % 5 === 0 ? 'fr' : 'GB',
  listing_type: i % 2 === 0 ? 'sale' : 'rent',
  property_type: ['apartment', 'house', 'land', 'commercial'][i % 4]!,
  ...(i % 7 === 3 ? { withdrawn: true } : {}),
  title: `Listing ${i}`,
  price: 1000 + i,
  bedrooms: i % 4 < 2 ? i % 5 : null,
}));
records.push({ id: 'x.y~z_0-A', country: 'GB', listing_type: 'sale', property_type: 'house', withdrawn: true, extra: { nested: [1] } });

async function get(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

describe('backend-mock with LISTINGS_FILE', () => {
  let backend: RunningProcess;
  beforeAll(async () => {
    const file = write('listings.ndjson', `${records.map((r) => JSON.stringify(r)).join('\n')}\n\n`);
    backend = await startProcess(MAIN, { BACKEND_PORT: '0', LISTINGS_FILE: file });
  });
  afterAll(() => backend?.stop());

  it('announces its real port in one JSON "listening" line', () => {
    const listening = backend.output.filter((line) => line.includes('"listening"'));
    expect(listening).toHaveLength(1);
    const entry = JSON.parse(listening[0]!) as { port: number; listings: number; msg: string };
    expect(entry).toMatchObject({ msg: 'listening', port: backend.port, listings: records.length });
    expect(backend.port).toBeGreaterThan(0);
  });

  it('reports health', async () => {
    expect(await get(`${backend.url}/internal/health`)).toEqual({ status: 200, body: { status: 'ok', listings: records.length } });
  });

  it('pages through a country: every published listing once, in id order, without the withdrawn flag', async () => {
    const want = records.filter((r) => r.country === 'GB' && r.withdrawn !== true).map((r) => r.id).sort();
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const query: string = after === null ? '' : `&after=${encodeURIComponent(after)}`;
      const { status, body } = await get(`${backend.url}/internal/v1/listings?country=GB&limit=30${query}`);
      expect(status).toBe(200);
      expect(body.items.filter((item: Row) => 'withdrawn' in item)).toEqual([]);
      seen.push(...body.items.map((item: Row) => item.id));
      after = body.next_after as string | null;
    } while (after !== null);
    expect(seen).toEqual(want);
  });

  it('filters by listing and property type, with countries normalised to upper case', async () => {
    const want = records
      .filter((r) => r.country.toUpperCase() === 'FR' && r.listing_type === 'sale' && r.property_type === 'land' && r.withdrawn !== true)
      .map((r) => r.id).sort();
    const { body } = await get(`${backend.url}/internal/v1/listings?country=FR&listing_type=sale&property_type=land&limit=1000`);
    expect(body.items.map((item: Row) => item.id)).toEqual(want);
    expect(body.items.every((item: Row) => item.country === 'FR')).toBe(true);
    expect(body.next_after).toBeNull();
  });

  it('looks up one listing, withdrawn ones included, keeping unknown fields', async () => {
    const { status, body } = await get(`${backend.url}/internal/v1/listings/GB/${encodeURIComponent('x.y~z_0-A')}`);
    expect(status).toBe(200);
    expect(body.item).toEqual(records[records.length - 1]);
    const published = records.find((r) => r.country === 'GB' && r.withdrawn === undefined)!;
    expect((await get(`${backend.url}/internal/v1/listings/GB/${published.id}`)).body.item).toEqual({ ...published, withdrawn: false });
  });

  it('answers its own errors', async () => {
    expect(await get(`${backend.url}/internal/v1/listings/GB/none`)).toMatchObject({ status: 404, body: { code: 'LISTING_NOT_FOUND' } });
    expect(await get(`${backend.url}/internal/v1/nothing`)).toMatchObject({ status: 404, body: { code: 'NO_ROUTE' } });
    expect(await get(`${backend.url}/internal/v1/listings?country=GB&limit=5000`)).toMatchObject({ status: 400, body: { code: 'BAD_REQUEST' } });
    const res = await fetch(`${backend.url}/internal/health`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(await res.json()).toEqual({ code: 'METHOD_NOT_ALLOWED' });
  });

  it('logs nothing per request at info level, and exits 0 on SIGTERM', async () => {
    const before = backend.output.length;
    await get(`${backend.url}/internal/health`);
    await get(`${backend.url}/internal/v1/listings?country=GB`);
    expect(backend.output.slice(before)).toEqual([]);
    expect(await backend.stop('SIGTERM')).toBe(0);
  });
});

describe('backend-mock with generated listings', () => {
  it('generates the default 120,000 listings, serves them, and exits 0 on SIGINT', async () => {
    const backend = await startProcess(MAIN, { BACKEND_PORT: '0' });
    try {
      const entry = JSON.parse(backend.output.find((line) => line.includes('"listening"'))!) as { startup_cpu_ms: number; listings: number };
      expect(entry.listings).toBe(120000);
      // Start-up time is reported, not asserted (tests never assert speed; `npm run bench` measures).
      expect(entry.startup_cpu_ms).toBeGreaterThan(0);
      expect((await get(`${backend.url}/internal/health`)).body).toEqual({ status: 'ok', listings: 120000 });
      const first = (await get(`${backend.url}/internal/v1/listings?country=GB&limit=1000`)).body;
      expect(first.items).toHaveLength(1000);
      expect(first.items[0]).toMatchObject({ country: 'GB', currency: 'GBP' });
      const next = (await get(`${backend.url}/internal/v1/listings?country=GB&limit=5&after=${first.next_after as string}`)).body;
      expect(next.items[0].id > first.next_after).toBe(true);
    } finally {
      expect(await backend.stop('SIGINT')).toBe(0);
    }
  });

  it('honours LISTINGS_COUNT and gives the same data on every start', async () => {
    const firstPage = async (): Promise<unknown> => {
      const backend = await startProcess(MAIN, { BACKEND_PORT: '0', LISTINGS_COUNT: '3000' });
      try {
        expect((await get(`${backend.url}/internal/health`)).body.listings).toBe(3000);
        return (await get(`${backend.url}/internal/v1/listings?country=DE&limit=50`)).body;
      } finally {
        await backend.stop();
      }
    };
    const [a, b] = await Promise.all([firstPage(), firstPage()]);
    expect(a).toEqual(b);
  });
});

describe('backend-mock start-up failures', () => {
  async function expectOneLineFailure(env: { [name: string]: string }, line: string | RegExp): Promise<void> {
    const { code, stdout, stderr } = await runToExit(MAIN, { BACKEND_PORT: '0', ...env });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    const lines = stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(stderr.endsWith('\n')).toBe(true);
    expect(lines[0]).toMatch(line);
    expect(stderr).not.toMatch(/\n\s+at /);
  }

  it('rejects a bad record with the file, entry and field', async () => {
    const file = write('bad.ndjson', [...records.slice(0, 11), { ...records[11], listing_type: 'let' }].map((r) => JSON.stringify(r)).join('\n'));
    await expectOneLineFailure({ LISTINGS_FILE: file }, `LISTINGS_FILE ${file}: entry 12: field "listing_type": must be one of sale, rent`);
  });

  it('rejects a duplicate in a JSON array', async () => {
    const file = write('dup.json', JSON.stringify([records[1], records[2], records[1]]));
    await expectOneLineFailure({ LISTINGS_FILE: file }, `LISTINGS_FILE ${file}: entry 3: field "id": duplicate of entry 1 (country GB, id ${records[1]!.id})`);
  });

  it('rejects invalid JSON and missing files', async () => {
    const broken = write('broken.json', '[{"id":');
    await expectOneLineFailure({ LISTINGS_FILE: broken }, new RegExp(`^LISTINGS_FILE ${broken}: invalid JSON: `));
    const missing = path.join(dir, 'missing.ndjson');
    await expectOneLineFailure({ LISTINGS_FILE: missing }, new RegExp(`^LISTINGS_FILE ${missing}: cannot read: ENOENT`));
  });

  it('rejects bad environment values', async () => {
    await expectOneLineFailure({ BACKEND_PORT: 'http' }, 'BACKEND_PORT: must be an integer from 0 to 65535, got "http"');
    await expectOneLineFailure({ LISTINGS_COUNT: '-5' }, 'LISTINGS_COUNT: must be an integer from 0 to 5000000, got "-5"');
    await expectOneLineFailure({ LOG_LEVEL: 'loud' }, /^LOG_LEVEL: must be one of .*debug.*, got "loud"$/);
  });

  it('reports a port already in use', async () => {
    const backend = await startProcess(MAIN, { BACKEND_PORT: '0', LISTINGS_COUNT: '10' });
    try {
      await expectOneLineFailure({ BACKEND_PORT: String(backend.port), LISTINGS_COUNT: '10' }, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${backend.port}: .*EADDRINUSE`));
    } finally {
      await backend.stop();
    }
  });
});
