import { createHook } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';
import { compressSync, DYNAMIC_LEVELS, HAS_ZSTD } from '../../gateway/compression/codecs';
import { compressReused } from '../../gateway/compression/reused-engine';
import type { ContentCoding } from '../../gateway/compression/negotiate';
import { zstd, zstdParams } from '../../gateway/compression/zstd';

const page = Buffer.from(JSON.stringify({ data: Array.from({ length: 20 }, (_, i) => ({ id: `GB-${1000 + i}`, country: 'GB', title: `A flat with ${i % 4} bedrooms`, price: 100000 + i * 1234 })), next_cursor: null }));
const bodies: Array<[string, Buffer]> = [
  ['empty', Buffer.alloc(0)],
  ['10 bytes', Buffer.from('{"a":1234}')],
  ['a page', page],
  ['200 KB of random bytes (more than the engine\'s 64 KB scratch: several turns)', randomBytes(200 * 1024)],
  ['a page again', page],
];

const oneShot: Record<'gzip' | 'zstd', (b: Buffer) => Buffer> = {
  gzip: (b) => zlib.gzipSync(b, { level: DYNAMIC_LEVELS.gzip }),
  zstd: (b) => zstd.zstdCompressSync!(b, zstdParams(DYNAMIC_LEVELS.zstd)),
};
const decode: Record<ContentCoding, (b: Buffer) => Buffer> = { gzip: zlib.gunzipSync, br: zlib.brotliDecompressSync, zstd: (b) => zstd.zstdDecompressSync!(b) };
const reused = (HAS_ZSTD ? ['gzip', 'zstd'] : ['gzip']) as Array<'gzip' | 'zstd'>;

describe('compressSync with a kept engine (gzip, zstd)', () => {
  it.each(reused)('%s: each body, one after the other, comes out byte-identical to the one-shot function and decodes back', (coding) => {
    for (const [name, body] of bodies) {
      const out = compressSync(coding, body);
      expect({ name, same: out.equals(oneShot[coding](body)) }).toEqual({ name, same: true });
      expect(decode[coding](out).equals(body)).toBe(true);
    }
  });

  it.each(reused)('%s: makes no new zlib handle per answer (a new stream per call cost several times the compression in a running gateway)', (coding) => {
    compressSync(coding, page); // the engine is made (and checked) on first use
    // gzip's engine works on every supported Node line; zstd's passes its own check on Node 26 but
    // not on Node 22, where the one-shot function serves (one handle an answer), as designed.
    const kept = compressReused(coding, DYNAMIC_LEVELS[coding], page) !== undefined;
    if (coding === 'gzip') expect(kept).toBe(true);
    let handles = 0;
    const hook = createHook({ init: (_id, type) => { if (type === 'ZLIB') handles++; } }).enable();
    try {
      for (let i = 0; i < 50; i++) compressSync(coding, page);
    } finally {
      hook.disable();
    }
    expect(handles).toBe(kept ? 0 : 50);
  });

  it('brotli keeps the one-shot function (a reset brotli handle forgets its quality): its answer is quality 1\'s', () => {
    const q1 = zlib.brotliCompressSync(page, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: DYNAMIC_LEVELS.br, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: page.length } });
    for (let i = 0; i < 3; i++) {
      const out = compressSync('br', page);
      expect(out.equals(q1)).toBe(true);
      expect(decode.br(out).equals(page)).toBe(true);
    }
  });
});

describe('compressReused when the runtime\'s zlib streams lack what the engine drives', () => {
  it('answers undefined, and compressSync falls back to the one-shot function', () => {
    jest.isolateModules(() => {
      const createGzip = (options?: zlib.ZlibOptions): zlib.Gzip => {
        const stream = zlib.createGzip(options);
        (stream as unknown as { _handle: unknown })._handle = { close: () => undefined }; // no writeSync, no reset
        return stream;
      };
      jest.doMock('node:zlib', () => ({ ...zlib, createGzip }));
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const engine = require('../../gateway/compression/reused-engine') as typeof import('../../gateway/compression/reused-engine');
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const codecs = require('../../gateway/compression/codecs') as typeof import('../../gateway/compression/codecs');
      expect(engine.compressReused('gzip', 3, page)).toBeUndefined();
      const out = codecs.compressSync('gzip', page);
      expect(out.equals(oneShot.gzip(page))).toBe(true);
      expect(decode.gzip(out).equals(page)).toBe(true);
    });
    jest.dontMock('node:zlib');
  });
});

describe('compressReused when the native handle fails in the middle of an answer', () => {
  it('answers undefined (nothing read from a destroyed stream), drops the engine, and compressSync falls back to the one-shot function', () => {
    jest.isolateModules(() => {
      let writes = 0;
      let failAt = Infinity;
      const createGzip = (options?: zlib.ZlibOptions): zlib.Gzip => {
        const stream = zlib.createGzip(options);
        const inner = stream as unknown as { _handle: { writeSync(...a: unknown[]): void } };
        const real = inner._handle.writeSync.bind(inner._handle);
        inner._handle.writeSync = (...a: unknown[]): void => {
          writes++;
          // As node:zlib's own error callback does: the stream is destroyed synchronously, its
          // 'error' event follows on the next tick, and the output state is left as it was.
          if (writes >= failAt) stream.destroy(new Error('a native zlib error'));
          else real(...a);
        };
        return stream;
      };
      jest.doMock('node:zlib', () => ({ ...zlib, createGzip }));
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const engine = require('../../gateway/compression/reused-engine') as typeof import('../../gateway/compression/reused-engine');
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const codecs = require('../../gateway/compression/codecs') as typeof import('../../gateway/compression/codecs');
      expect(engine.compressReused('gzip', 3, page)!.equals(oneShot.gzip(page))).toBe(true); // made, checked, used
      failAt = writes + 1;
      expect(engine.compressReused('gzip', 3, page)).toBeUndefined();
      const before = writes;
      const out = codecs.compressSync('gzip', page);
      expect(writes).toBe(before); // the failed engine is not used again
      expect(out.equals(oneShot.gzip(page))).toBe(true);
      expect(decode.gzip(out).equals(page)).toBe(true);
    });
    jest.dontMock('node:zlib');
  });
});
