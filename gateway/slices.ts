/**
 * Long work on the serving thread, done a slice at a time: at most SLICE_MS, then a pause as long
 * as the slice took, in which the requests waiting get their turn. At half duty the work does not
 * make this process a CPU hog in the scheduler's eyes: on a busy machine a process that keeps the
 * CPU is preempted for tens of milliseconds at a time, and every request waits with it.
 */
import { performance } from 'node:perf_hooks';

/** The longest this thread works on one slice before requests get their turn. */
export const SLICE_MS = 4;

/** Resolves after a pause of about `workedMs` (at least a timer tick) in which waiting requests are handled. */
export const nextTurn = (workedMs = 0): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.ceil(workedMs))));

/** Calls `step(i)` for every i from 0 to count - 1, in slices of at most about SLICE_MS. */
export async function inSlices(count: number, step: (i: number) => void): Promise<void> {
  let i = 0;
  while (i < count) {
    const started = performance.now();
    const until = started + SLICE_MS;
    do step(i++);
    while (i < count && performance.now() < until);
    if (i < count) await nextTurn(performance.now() - started);
  }
}
