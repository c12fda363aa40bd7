import { types } from 'node:util';
import zlib from 'node:zlib';
import { zstd, zstdParams } from './zstd';

/**
 * One native compressor per coding and level, kept for the life of the process and reset between
 * answers, instead of a new one per answer.
 *
 * Why: `zlib.gzipSync` / `zstdCompressSync` build a whole stream per call (a Transform with its
 * states, a native handle with a 16 KB output buffer, and for gzip a fresh ~270 KB deflate state).
 * In a tight loop that costs ~20 µs per 8 KB page; in a running gateway the per-call objects and
 * native handles kept V8 busy with major collections (several a second at 1,000 req/s) and the
 * added CPU per compressed page was 3 to 8 times the loop's (bench/edges.ts, end to end).
 *
 * How: the engine's native handle is driven directly (`writeSync` with the finishing flush into a
 * scratch buffer kept with it, then `reset()`), as `zlib.*Sync` itself does inside. These are
 * Node's internal members of a zlib stream, not documented API; so each engine checks itself when
 * made (the shape is there, two answers come out byte-identical to the one-shot function and decode
 * back) and `compressReused` answers undefined when it does not hold, the caller then using the
 * public one-shot function. Brotli is not reused: its handle's reset drops the quality parameter
 * (it compresses at quality 11 afterwards), so it stays on `brotliCompressSync`.
 */
export type ReusableCoding = 'gzip' | 'zstd';

interface NativeHandle {
  writeSync(flush: number, input: Buffer, inOff: number, inLen: number, out: Buffer, outOff: number, outLen: number): void;
  reset(): void;
}
interface EngineInternals {
  _handle?: NativeHandle | null;
  _writeState?: Uint32Array;
  _finishFlushFlag?: number;
}
interface Engine {
  readonly stream: zlib.Gzip;
  readonly handle: NativeHandle;
  readonly state: Uint32Array;
  readonly finish: number;
  failed: boolean;
}

/** The scratch output of an engine: one page's compressed form fits with room to spare. */
const SCRATCH_BYTES = 64 * 1024;
const scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
const engines = new Map<string, Engine | null>();

function oneShot(coding: ReusableCoding, level: number, body: Buffer): Buffer {
  return coding === 'gzip' ? zlib.gzipSync(body, { level }) : zstd.zstdCompressSync!(body, zstdParams(level));
}

function makeEngine(coding: ReusableCoding, level: number): Engine | null {
  if (coding === 'zstd' && (typeof zstd.createZstdCompress !== 'function' || typeof zstd.zstdCompressSync !== 'function')) return null;
  const stream = coding === 'gzip' ? zlib.createGzip({ level }) : zstd.createZstdCompress!(zstdParams(level));
  const inner = stream as unknown as EngineInternals;
  const handle = inner._handle;
  if (!handle || typeof handle.writeSync !== 'function' || typeof handle.reset !== 'function' || !types.isUint32Array(inner._writeState) || typeof inner._finishFlushFlag !== 'number') {
    stream.destroy();
    return null;
  }
  const engine: Engine = { stream, handle, state: inner._writeState, finish: inner._finishFlushFlag, failed: false };
  stream.on('error', () => { engine.failed = true; });
  return engine;
}

/** Two answers from the engine, byte-identical to the one-shot function's, decoding back to the sample. */
function selfCheck(engine: Engine, coding: ReusableCoding, level: number): boolean {
  const sample = Buffer.from(JSON.stringify({ data: Array.from({ length: 40 }, (_, i) => ({ id: `c-${i}`, n: i * 7919, t: `self-check ${i % 7}` })) }));
  try {
    const first = run(engine, sample);
    const second = run(engine, sample);
    if (first === undefined || second === undefined) return false;
    const expected = oneShot(coding, level, sample);
    const decoded = coding === 'gzip' ? zlib.gunzipSync(second) : zstd.zstdDecompressSync!(second);
    return first.equals(expected) && second.equals(expected) && decoded.equals(sample);
  } catch {
    return false;
  }
}

/** Compresses `body` whole (finishing flush) into the scratch buffer, in as many turns as it takes; resets the engine. */
function run(engine: Engine, body: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let inOff = 0;
  let total = 0;
  for (;;) {
    const inLen = body.length - inOff;
    if (engine.failed || engine.stream.destroyed) return undefined;
    engine.handle.writeSync(engine.finish, body, inOff, inLen, scratch, 0, SCRATCH_BYTES);
    // A native error destroys the stream at once (its 'error' event comes a tick later): nothing
    // more may be written to the closed handle, and what the state says is not this answer's.
    if (engine.failed || engine.stream.destroyed) return undefined;
    const [availOut, availIn] = [engine.state[0]!, engine.state[1]!];
    const produced = SCRATCH_BYTES - availOut;
    // A copy of exactly the bytes made (small ones come from Buffer's pool): the scratch is reused.
    parts.push(Buffer.from(scratch.subarray(0, produced)));
    total += produced;
    inOff += inLen - availIn;
    if (availOut !== 0) break; // the output did not fill the scratch: the stream is finished
  }
  engine.handle.reset();
  return parts.length === 1 ? parts[0] : Buffer.concat(parts, total);
}

/**
 * `body` compressed by the kept engine of `coding` at `level`, or undefined when this runtime's
 * zlib streams do not have the shape the engine relies on (or an engine failed): the caller then
 * uses the one-shot function.
 */
export function compressReused(coding: ReusableCoding, level: number, body: Buffer): Buffer | undefined {
  const key = `${coding}:${level}`;
  let engine = engines.get(key);
  if (engine === undefined) {
    engine = makeEngine(coding, level);
    if (engine && !selfCheck(engine, coding, level)) {
      engine.stream.destroy();
      engine = null;
    }
    engines.set(key, engine);
  }
  if (engine === null) return undefined;
  let out: Buffer | undefined;
  try {
    out = run(engine, body);
  } catch {
    out = undefined;
  }
  if (out === undefined) {
    engine.stream.destroy();
    engines.set(key, null); // a failed engine is not trusted again; the one-shot function takes over
  }
  return out;
}
