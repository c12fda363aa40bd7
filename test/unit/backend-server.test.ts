import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { ListingRecord, StoredListing, toFlatListing } from '../../backend-mock/listing';
import { ListingIndex } from '../../backend-mock/listing-index';
import { createBackendServer, KEEP_ALIVE_TIMEOUT_MS, ListingSource } from '../../backend-mock/server';

function listing(id: string, extra: Partial<ListingRecord> = {}, withdrawn = false): StoredListing {
  return { record: { id, country: 'GB', listing_type: 'sale', property_type: 'house', title: `House ${id}`, price: 300000, ...extra }, withdrawn };
}

const listings: StoredListing[] = [
  ...Array.from({ length: 45 }, (_, i) => listing(`GB-${String(i).padStart(3, '0')}`, {
    listing_type: i % 3 === 0 ? 'rent' : 'sale',
    property_type: i % 2 === 0 ? 'apartment' : 'house',
  }, i % 10 === 5)),
  listing('a.b~c_d-E', { country: 'FR', bedrooms: null }, true),
  listing('fr-1', { country: 'FR' }),
];
const published = listings.filter((l) => !l.withdrawn && l.record.country === 'GB').map((l) => l.record.id);

/** Captures log lines so tests can see what each level writes. */
function capturingLogger(level: string): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level }, stream), lines };
}

async function listen(source: ListingSource, level = 'info'): Promise<{ server: http.Server; url: string; lines: Record<string, unknown>[] }> {
  const { logger, lines } = capturingLogger(level);
  const server = createBackendServer(source, logger);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, lines };
}

function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

async function get(url: string, init?: RequestInit): Promise<{ status: number; body: any; headers: Headers; text: string }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), headers: res.headers, text };
}

let server: http.Server;
let url: string;
let lines: Record<string, unknown>[];
beforeAll(async () => ({ server, url, lines } = await listen(new ListingIndex(listings))));
afterAll(() => close(server));

describe('GET /internal/v1/listings', () => {
  it('answers the public-array format when asked: the items alone, the next position in X-Next-After', async () => {
    const asked = { headers: { 'x-page-format': 'public-array' } };
    const classic = await get(`${url}/internal/v1/listings?country=GB&limit=10`);
    const first = await get(`${url}/internal/v1/listings?country=GB&limit=10`, asked);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-page-format')).toBe('public-array');
    expect(first.text).toBe(JSON.stringify(classic.body.items));
    expect(first.headers.get('x-next-after')).toBe(classic.body.next_after);
    const last = await get(`${url}/internal/v1/listings?country=GB&limit=1000`, asked);
    expect(last.body.map((l: { id: string }) => l.id)).toEqual(published);
    expect(last.headers.get('x-next-after')).toBeNull(); // the last page
    expect(last.text).not.toContain('withdrawn');
  });

  it('answers the first page with the default limit of 20', async () => {
    const { status, body, headers, text } = await get(`${url}/internal/v1/listings?country=GB`);
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('application/json');
    expect(headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(body.items.map((l: ListingRecord) => l.id)).toEqual(published.slice(0, 20));
    expect(body.next_after).toBe(published[19]);
    expect(body.items[0]).toEqual({ id: 'GB-000', country: 'GB', listing_type: 'rent', property_type: 'apartment', title: 'House GB-000', price: 300000 });
  });

  it('walks every page of a filter exactly once', async () => {
    const want = listings
      .filter(({ record: r, withdrawn }) => !withdrawn && r.country === 'GB' && r.listing_type === 'sale' && r.property_type === 'house')
      .map((l) => l.record.id);
    const seen: string[] = [];
    let after = '';
    for (;;) {
      const { body } = await get(`${url}/internal/v1/listings?country=GB&listing_type=sale&property_type=house&limit=4${after}`);
      seen.push(...body.items.map((l: ListingRecord) => l.id));
      for (const item of body.items) expect(item).not.toHaveProperty('withdrawn');
      if (body.next_after === null) break;
      after = `&after=${encodeURIComponent(body.next_after as string)}`;
    }
    expect(seen).toEqual(want);
  });

  it('gives an empty page for an unknown country and past the end', async () => {
    expect((await get(`${url}/internal/v1/listings?country=US`)).body).toEqual({ items: [], next_after: null });
    expect((await get(`${url}/internal/v1/listings?country=GB&after=GB-999`)).body).toEqual({ items: [], next_after: null });
  });

  it('accepts limit 1 and 1000', async () => {
    expect((await get(`${url}/internal/v1/listings?country=GB&limit=1`)).body.items).toHaveLength(1);
    const all = (await get(`${url}/internal/v1/listings?country=GB&limit=1000`)).body;
    expect(all.items).toHaveLength(published.length);
    expect(all.next_after).toBeNull();
  });

  it.each([
    ['', 'country is required'],
    ['?limit=5', 'country is required'],
    ['?country=gb', 'country must be two upper-case letters'],
    ['?country=GBR', 'country must be two upper-case letters'],
    ['?country=GB&country=FR', 'query parameter "country" is repeated'],
    ['?country=GB&listing_type=lease', 'listing_type must be one of sale, rent'],
    ['?country=GB&property_type=castle', 'property_type must be one of apartment, house, land, commercial'],
    ['?country=GB&limit=0', 'limit must be an integer from 1 to 1000'],
    ['?country=GB&limit=1001', 'limit must be an integer from 1 to 1000'],
    ['?country=GB&limit=-1', 'limit must be an integer from 1 to 1000'],
    ['?country=GB&limit=1.5', 'limit must be an integer from 1 to 1000'],
    ['?country=GB&limit=010', 'limit must be an integer from 1 to 1000'],
    ['?country=GB&limit=', 'query parameter "limit" is empty'],
    ['?country=GB&after=a%2Fb', 'after must be the id of the last item of the previous page'],
    ['?country=GB&cursor=abc', 'unknown query parameter "cursor"'],
  ])('rejects %s with 400 BAD_REQUEST', async (query, detail) => {
    const { status, body } = await get(`${url}/internal/v1/listings${query}`);
    expect(status).toBe(400);
    expect(body.code).toBe('BAD_REQUEST');
    expect(body.detail).toContain(detail);
  });
});

describe('GET /internal/v1/listings/{COUNTRY}/{id}', () => {
  it('returns a published listing with withdrawn false', async () => {
    const { status, body } = await get(`${url}/internal/v1/listings/GB/GB-001`);
    expect(status).toBe(200);
    expect(body).toEqual({ item: toFlatListing(listings[1]!) });
    expect(body.item.withdrawn).toBe(false);
  });

  it('returns a withdrawn listing with its flag, percent-decoding the id', async () => {
    const { status, body } = await get(`${url}/internal/v1/listings/FR/a.b%7Ec_d-E`);
    expect(status).toBe(200);
    expect(body.item).toEqual({ ...listings[45]!.record, withdrawn: true });
  });

  it.each(['GB/GB-999', 'FR/GB-001', 'gb/GB-001', 'GB/GB-001%2Fx', 'GBR/GB-001'])('answers 404 LISTING_NOT_FOUND for %s', async (rest) => {
    const { status, body } = await get(`${url}/internal/v1/listings/${rest}`);
    expect(status).toBe(404);
    expect(body.code).toBe('LISTING_NOT_FOUND');
    expect(typeof body.detail).toBe('string');
  });

  it('rejects malformed percent-encoding and query parameters with 400', async () => {
    expect((await get(`${url}/internal/v1/listings/GB/%E0%A4%A`)).body.code).toBe('BAD_REQUEST');
    expect((await get(`${url}/internal/v1/listings/GB/GB-001?x=1`)).status).toBe(400);
  });
});

describe('other routes and errors', () => {
  it('reports health with the count of all stored listings', async () => {
    const { status, body } = await get(`${url}/internal/health`);
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'ok', listings: listings.length });
  });

  it.each(['/', '/internal', '/internal/v1/listings/', '/internal/v1/listings/GB', '/internal/v1/listings/GB/a/b', '/internal/health/', '/internal/v1/listings//x'])(
    'answers 404 NO_ROUTE for %s', async (path) => {
      const { status, body } = await get(`${url}${path}`);
      expect(status).toBe(404);
      expect(body.code).toBe('NO_ROUTE');
    });

  it.each(['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])('answers %s with 405', async (method) => {
    const { status, body, headers } = await get(`${url}/internal/v1/listings?country=GB`, { method });
    expect(status).toBe(405);
    expect(body).toEqual({ code: 'METHOD_NOT_ALLOWED' });
    expect(headers.get('allow')).toBe('GET');
  });

  it('answers HEAD with 405 and no body', async () => {
    const res = await fetch(`${url}/internal/health`, { method: 'HEAD' });
    expect(res.status).toBe(405);
  });

  it('turns an unexpected exception into 500 INTERNAL and logs it', async () => {
    const failing: ListingSource = {
      size: 0,
      page: () => { throw new Error('index exploded'); },
      get: () => undefined,
    };
    const broken = await listen(failing);
    try {
      const { status, body } = await get(`${broken.url}/internal/v1/listings?country=GB`);
      expect(status).toBe(500);
      expect(body).toEqual({ code: 'INTERNAL', detail: 'index exploded' });
      expect(broken.lines.some((l) => l.msg === 'request failed')).toBe(true);
      // The server still answers afterwards.
      expect((await get(`${broken.url}/internal/health`)).status).toBe(200);
    } finally {
      await close(broken.server);
    }
  });

  it('keeps connections alive longer than a typical client pool idles', () => {
    expect(server.keepAliveTimeout).toBe(KEEP_ALIVE_TIMEOUT_MS);
    expect(KEEP_ALIVE_TIMEOUT_MS).toBeGreaterThan(60_000);
    expect(server.headersTimeout).toBeGreaterThan(server.keepAliveTimeout);
  });

  it('serves several requests over one kept-alive connection', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    try {
      for (let i = 0; i < 3; i += 1) {
        await new Promise<void>((resolve, reject) => {
          http.get(`${url}/internal/health`, { agent }, (res) => {
            sockets.add(res.socket);
            expect(res.headers.connection).toBe('keep-alive');
            res.resume();
            res.on('end', resolve);
          }).on('error', reject);
        });
      }
      expect(sockets.size).toBe(1);
    } finally {
      agent.destroy();
    }
  });
});

describe('request logging', () => {
  it('stays quiet per request at info level', async () => {
    const before = lines.length;
    await get(`${url}/internal/health`);
    expect(lines.length).toBe(before);
  });

  it('logs one line per request at debug level', async () => {
    const debug = await listen(new ListingIndex(listings), 'debug');
    try {
      await get(`${debug.url}/internal/health`);
      await get(`${debug.url}/nowhere`);
      expect(debug.lines.map((l) => [l.msg, l.url, l.status])).toEqual([
        ['request', '/internal/health', 200],
        ['request', '/nowhere', 404],
      ]);
    } finally {
      await close(debug.server);
    }
  });
});
