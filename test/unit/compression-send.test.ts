import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import type { RequestContext } from '../../gateway/pipeline';

// When the codec throws (out of memory, a native error) a served request still gets its answer,
// uncompressed, never a 500: the public surface's pages and the reference material alike.
const page = Buffer.from(JSON.stringify({ data: Array.from({ length: 40 }, (_, i) => ({ id: `GB-${i}`, title: `A flat with ${i % 4} bedrooms` })) }));

type SendModule = typeof import('../../gateway/compression/send-compressed');
type VariantsModule = typeof import('../../gateway/compression/static-variants');

/** The compression modules loaded against a node:zlib whose gzip compression throws. */
function withFailingGzip(): { send: SendModule; variants: VariantsModule } {
  let loaded!: { send: SendModule; variants: VariantsModule };
  jest.isolateModules(() => {
    const fail = (): never => {
      throw new Error('a native zlib error');
    };
    jest.doMock('node:zlib', () => ({ ...zlib, gzipSync: fail, createGzip: fail }));
    /* eslint-disable @typescript-eslint/no-require-imports */
    loaded = {
      send: require('../../gateway/compression/send-compressed') as SendModule,
      variants: require('../../gateway/compression/static-variants') as VariantsModule,
    };
    /* eslint-enable @typescript-eslint/no-require-imports */
  });
  jest.dontMock('node:zlib');
  return loaded;
}

async function answer(send: SendModule, acceptEncoding: string): Promise<{ status: number; encoding: string | undefined; body: Buffer; encoded: unknown }> {
  let encoded: unknown;
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const ctx = { req, res } as unknown as RequestContext;
    send.sendJsonCompressible(ctx, page);
    encoded = ctx.encoded;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/', headers: { 'accept-encoding': acceptEncoding } }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, encoding: res.headers['content-encoding'], body: Buffer.concat(parts), encoded }));
      }).on('error', reject);
    });
  } finally {
    await new Promise((r) => server.close(r));
  }
}

it('the codec works: the page goes gzip (the control for the cases below)', async () => {
  const send = jest.requireActual<SendModule>('../../gateway/compression/send-compressed');
  const got = await answer(send, 'gzip');
  expect(got.encoding).toBe('gzip');
  expect(zlib.gunzipSync(got.body).equals(page)).toBe(true);
});

it.each(['gzip', 'gzip, identity;q=0'])('the codec throws, Accept-Encoding "%s": 200 with the page uncompressed, the access line says identity', async (acceptEncoding) => {
  const { send } = withFailingGzip();
  const got = await answer(send, acceptEncoding);
  expect(got.status).toBe(200);
  expect(got.encoding).toBeUndefined();
  expect(got.body.equals(page)).toBe(true);
  expect(got.encoded).toEqual({ encoding: 'identity', bytes: page.length, sentBytes: page.length });
});

it('the codec throws for a reference file whose caller refuses identity: the file goes uncompressed', () => {
  const { variants } = withFailingGzip();
  const v = new variants.StaticVariants(page).pick('gzip, identity;q=0');
  expect(v.coding).toBe('identity');
  expect(v.bytes.equals(page)).toBe(true);
});
