import type { RequestHandler } from 'express';
import { ApiError } from '../errors';

export interface AdmissionOptions {
  /** Admin requests worked on at once (their CPU shares the serving thread with /v1). */
  readonly concurrent: number;
  /** Requests waiting beyond those; more are answered 429 at once. */
  readonly queued: number;
}

/** One at a time, 64 waiting: enough for operators and billing systems, never enough to crowd /v1 out. */
export const DEFAULT_ADMISSION: AdmissionOptions = { concurrent: 1, queued: 64 };

/**
 * Admin work shares the event loop that serves `/v1`: this gate lets `concurrent` admin-listener
 * requests run at once and queues `queued` more in arrival order, so however many readers
 * hammer the admin API and the console, at most that much admin work competes with the public
 * requests at any moment. Past the queue, 429 `rate_limited` with `Retry-After: 1`. A request
 * leaves the gate when its answer is finished or its connection closes.
 */
export function admitAdminWork(o: AdmissionOptions = DEFAULT_ADMISSION): RequestHandler {
  let running = 0;
  const waiting: Array<() => void> = [];
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  return function admitted(_req, res, next) {
    const start = (): void => {
      let done = false;
      const leave = (): void => {
        if (done) return;
        done = true;
        release();
      };
      res.once('finish', leave);
      res.once('close', leave);
      next();
    };
    if (running < o.concurrent) {
      running++;
      return start();
    }
    if (waiting.length >= o.queued) throw new ApiError('rate_limited', {}, 1, 'The admin listener is busy; retry in a second.');
    waiting.push(start);
  };
}
