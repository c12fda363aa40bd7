import type { Logger } from 'pino';
import type { CounterTally } from '../ops/tally';
import type { ContentCoding } from './negotiate';

/** Told of each codec failure: the coding and what it threw (the answer then goes uncompressed). */
export type CodecFailureSink = (coding: ContentCoding, err: unknown) => void;

let sink: CodecFailureSink | undefined;

/** Where this process's codec failures are told (the gateway's listener sets it at start-up: createGateway). */
export function reportCodecFailuresTo(next: CodecFailureSink | undefined): void {
  sink = next;
}

/** A codec failed on `coding`: told to the sink, if any. */
export function codecFailed(coding: ContentCoding, err: unknown): void {
  sink?.(coding, err);
}

/** At most one log line a minute, however many codecs fail. */
const LOG_EVERY_MS = 60_000;

/**
 * Counts each failure in `gateway_compression_failures_total{coding}` (`tally`) and logs one
 * warning at most once a minute, with the failures since the last line: a codec that fails on every
 * answer (a broken native build, memory pressure) must not write a line per request.
 */
export function codecFailureSink(tally: CounterTally, logger: Logger, now: () => number = Date.now): CodecFailureSink {
  let lastLogged = -Infinity;
  let unlogged = 0;
  return (coding, err) => {
    tally.add(coding);
    unlogged++;
    if (now() - lastLogged < LOG_EVERY_MS) return;
    lastLogged = now();
    logger.warn({ coding, err: err instanceof Error ? err.message : String(err), failures: unlogged }, 'compression failed: answers went uncompressed (gateway_compression_failures_total counts them)');
    unlogged = 0;
  };
}
