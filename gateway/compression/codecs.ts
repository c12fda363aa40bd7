import zlib from 'node:zlib';
import type { ContentCoding } from './negotiate';
import { codecFailed } from './codec-failures';
import { compressReused } from './reused-engine';
import { zstd, zstdParams, type ZstdOptions } from './zstd';

/** Bodies smaller than this go uncompressed (unless the caller refuses identity): the saving is not worth a coding. */
export const MIN_COMPRESSED_BYTES = 1024;

/** True when this runtime can compress zstd (detected, not assumed: CI runs Node 22 and 26). */
export const HAS_ZSTD = typeof zstd.zstdCompressSync === 'function' && typeof zstd.zstdCompress === 'function' && zstd.constants.ZSTD_c_compressionLevel !== undefined;

/**
 * The codings offered, in the server's order of preference when the caller weighs them alike (a
 * browser's `gzip, deflate, br, zstd`), and the level of each for answers made per request (pages,
 * listings, insights answers). Chosen by measurement, bench/compression-cost.ts (the figures and
 * the decision: docs/security-decisions.md): for each coding the level that saves the most bytes
 * per µs of CPU, levels within 15 % of the best counting as equal and the smaller output winning
 * among them; the codings ordered by the same rule. The largest page (limit=100, 39,371 bytes),
 * least CPU of 20 rounds:
 *   zstd 1: 6,770 bytes,  63 µs, 519 bytes saved per µs (zstd 3: 6,730 bytes, 83 µs)
 *   br 1:   7,355 bytes,  93 µs, 344 bytes saved per µs (br 2: 6,878 bytes, 213 µs)
 *   gzip 3: 6,858 bytes, 167 µs, 195 bytes saved per µs (gzip 1: 7,858 bytes, 148 µs; gzip 6: 358 µs)
 * and the default page (8,124 bytes): zstd 1 20 µs, br 1 30 µs, gzip 3 37 µs, the same order. End
 * to end the gateway's added CPU per 39 KB page was zstd +195 µs, br +339 µs, gzip +407 µs. So zstd
 * (where the runtime has it) comes first, then brotli, then gzip; brotli above level 1 costs twice
 * the CPU or more for 6 to 25 % fewer bytes, which a per-request answer does not repay.
 */
export const OFFERED: readonly ContentCoding[] = HAS_ZSTD ? ['zstd', 'br', 'gzip'] : ['br', 'gzip'];
export const DYNAMIC_LEVELS: Readonly<Record<ContentCoding, number>> = { gzip: 3, br: 1, zstd: 1 };
/**
 * Levels of the reference material, compressed once and kept. Brotli 9, not 11: Swagger UI's 1.7 MB
 * bundle takes 0.8 s at 9 and 10 s at 11 on this machine, for 9 % fewer bytes.
 */
export const STATIC_LEVELS: Readonly<Record<ContentCoding, number>> = { br: 9, gzip: 9, zstd: 19 };

function options(coding: ContentCoding, level: number, size: number): zlib.ZlibOptions & zlib.BrotliOptions & Partial<ZstdOptions> {
  if (coding === 'gzip') return { level };
  if (coding === 'br') return { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: level, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: size } };
  return zstdParams(level);
}

/**
 * Compresses on the calling thread: for a page of a few KB, cheaper than a trip to the thread pool.
 * gzip and zstd go through a kept engine (reused-engine.ts: a new stream per call cost several times
 * the compression itself in a running gateway); brotli, and any coding whose engine is unavailable,
 * through the one-shot function.
 */
export function compressSync(coding: ContentCoding, body: Buffer, level = DYNAMIC_LEVELS[coding]): Buffer {
  if (coding !== 'br') {
    const reused = compressReused(coding, level, body);
    if (reused) return reused;
  }
  const o = options(coding, level, body.length);
  if (coding === 'gzip') return zlib.gzipSync(body, o);
  if (coding === 'br') return zlib.brotliCompressSync(body, o);
  return zstd.zstdCompressSync!(body, o as ZstdOptions);
}

/**
 * The compressed body, or undefined when the codec threw (out of memory, a native error): the
 * answer then goes uncompressed, as for a caller that asked for none, rather than a 500 for a
 * request that was served. The failure is counted and logged (codec-failures.ts).
 */
export function compressedOrUndefined(coding: ContentCoding, bytes: Buffer): Buffer | undefined {
  try {
    return compressSync(coding, bytes);
  } catch (err) {
    codecFailed(coding, err);
    return undefined;
  }
}

/** Compresses on the thread pool (large reference files, once). */
export function compressAsync(coding: ContentCoding, body: Buffer, level = STATIC_LEVELS[coding]): Promise<Buffer> {
  const o = options(coding, level, body.length);
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, out: Buffer): void => (err ? reject(err) : resolve(out));
    if (coding === 'gzip') zlib.gzip(body, o, done);
    else if (coding === 'br') zlib.brotliCompress(body, o, done);
    else zstd.zstdCompress!(body, o as ZstdOptions, done);
  });
}
