import zlib from 'node:zlib';

/** The options node:zlib's zstd functions take: the level as a parameter. */
export interface ZstdOptions { params: Record<number, number> }

/**
 * node:zlib's zstd (Node ≥ 22.15 / 23.8), typed here once because the project's @types/node
 * predates it; every member is absent on an older runtime, so each use checks it (HAS_ZSTD).
 */
export interface ZstdZlib {
  zstdCompressSync?(buf: Buffer, options: ZstdOptions): Buffer;
  zstdCompress?(buf: Buffer, options: ZstdOptions, cb: (err: Error | null, out: Buffer) => void): void;
  zstdDecompressSync?(buf: Buffer): Buffer;
  createZstdCompress?(options: ZstdOptions): zlib.Gzip;
  constants: { ZSTD_c_compressionLevel?: number };
}

export const zstd = zlib as unknown as ZstdZlib;

/** The options of a zstd compression at `level`. */
export const zstdParams = (level: number): ZstdOptions => ({ params: { [zstd.constants.ZSTD_c_compressionLevel!]: level } });
