import type { RequestHandler } from 'express';
import { ApiError } from '../errors';

/** A slot never rests longer than this: a slow admin request (waiting on Redis, not on the CPU) does not hold the next one back long. */
const MAX_REST_MS = 250;

export interface AdmissionOptions {
  /** Admin requests worked on at once (their CPU shares the serving thread with /v1). */
  readonly concurrent: number;
  /** Requests waiting beyond those; more are answered 429 at once. */
  readonly queued: number;
  /** After a request, its slot rests this share of the time it was held (at most MAX_REST_MS): with 2, admin work gets at most about a third of the time. */
  readonly rest: number;
}

/** One at a time, 64 waiting, resting twice as long as the last one took: enough for operators and billing systems, never enough to crowd /v1 out. */
export const DEFAULT_ADMISSION: AdmissionOptions = { concurrent: 1, queued: 64, rest: 2 };

/**
 * Admin work shares the event loop that serves `/v1`: this gate lets `concurrent` admin-listener
 * requests run at once and queues `queued` more in arrival order, so however many readers
 * hammer the admin API and the console, at most that much admin work competes with the public
 * requests at any moment, and a slot rests after each request (`rest` times what it took). Past the queue, 429 `rate_limited` with `Retry-After: 1`. A request
 * leaves the gate when its answer is finished or its connection closes.
 */
export function admitAdminWork(o: AdmissionOptions = DEFAULT_ADMISSION): RequestHandler {
  let running = 0;
  const waiting: Array<() => void> = [];
  const handOn = (): void => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  // The slot rests before the next request takes it, so back-to-back admin requests leave the
  // serving thread free in between.
  const release = (heldMs: number): void => {
    const rest = Math.min(MAX_REST_MS, Math.round(heldMs * o.rest));
    if (rest > 0) setTimeout(handOn, rest);
    else handOn();
  };
  return function admitted(_req, res, next) {
    // Listened for from arrival: a caller that goes away while waiting leaves the queue, and one
    // that goes away while served frees its slot (a 'close' missed here would hold it for ever).
    let startedAt: number | undefined;
    let done = false;
    const start = (): void => {
      startedAt = performance.now();
      next();
    };
    const leave = (): void => {
      if (done) return;
      done = true;
      if (startedAt !== undefined) return release(performance.now() - startedAt);
      const at = waiting.indexOf(start);
      if (at >= 0) waiting.splice(at, 1);
    };
    if (running < o.concurrent) {
      running++;
      res.once('finish', leave);
      res.once('close', leave);
      return start();
    }
    if (waiting.length >= o.queued) throw new ApiError('rate_limited', {}, 1, 'The admin listener is busy; retry in a second.');
    res.once('finish', leave);
    res.once('close', leave);
    waiting.push(start);
  };
}
