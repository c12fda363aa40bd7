/**
 * Time in the suites: waiting for a condition (`eventually`), time budgets scaled by how loaded
 * the machine is in this very run (`loadFactor`, `budget`), baselines measured in the run, and
 * the calendar-minute windows of the limits.
 *
 * A budget a loaded machine can miss is never a bare number of milliseconds: it is the contract's
 * figure times the load factor measured now, or a multiple of a baseline measured in the same run.
 */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const CALIBRATION_WALL_MS = 100;
const MAX_LOAD_FACTOR = 16;
const REMEASURE_AFTER_MS = 15_000;
let lastFactor: { value: number; at: number } | undefined;

/**
 * How much slower than an idle machine this run is right now: a busy loop of ~100 ms wall time,
 * divided by the CPU time this process actually got during it (1 on an idle core; 4 when four
 * runnable processes share each core, as the gateways and Redis under test do). At least 1, at
 * most 16; measured again when the last figure is older than 15 s.
 */
export function loadFactor(): number {
  if (lastFactor && Date.now() - lastFactor.at < REMEASURE_AFTER_MS) return lastFactor.value;
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  while (performance.now() - wallBefore < CALIBRATION_WALL_MS) { /* busy: the CPU time we get is what is measured */ }
  const wallMs = performance.now() - wallBefore;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuMs = Math.max((cpu.user + cpu.system) / 1000, 1);
  const value = Math.min(Math.max(wallMs / cpuMs, 1), MAX_LOAD_FACTOR);
  lastFactor = { value, at: Date.now() };
  return value;
}

/** A figure of the contract (or of an idle machine) in ms, scaled by the load of this run. */
export function budget(ms: number): number {
  return Math.ceil(ms * loadFactor());
}

/**
 * Slack over a contract figure for a loaded machine: `idleMs` scaled by the load now, and at least
 * `times` × a baseline measured in this run (e.g. the same requests against a healthy upstream).
 */
export function allowance(idleMs: number, baselineMs = 0, times = 4): number {
  return Math.max(budget(idleMs), Math.ceil(baselineMs * times));
}

/** The median time of `runs` runs of `operation` (measured in this run, to derive budgets from). */
export async function baselineMs(operation: () => Promise<unknown>, runs = 5): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await operation();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export interface EventuallyOptions {
  /** The idle-machine timeout, scaled by `budget()` (default 10 s). */
  timeoutMs?: number;
  /** Pause between probes (default 50 ms). */
  intervalMs?: number;
  /** A probe that throws counts as "not yet" (default: the error fails the wait at once). */
  retryErrors?: boolean;
}

type Truthy<T> = Exclude<T, false | undefined | null | 0 | ''>;

/**
 * Polls `probe` until it returns a truthy value, and returns that value. A probe that throws fails
 * the wait (unless `retryErrors`). Throws after the (load-scaled) timeout, naming `what` and the
 * last value or error seen.
 */
export async function eventually<T>(what: string, probe: () => T | Promise<T>, options: EventuallyOptions = {}): Promise<Truthy<T>> {
  const timeoutMs = budget(options.timeoutMs ?? 10_000);
  const intervalMs = options.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as Truthy<T>;
      last = value;
    } catch (err) {
      if (!options.retryErrors) throw err;
      last = err;
    }
    if (Date.now() > deadline) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`not within ${timeoutMs} ms: ${what} (last seen: ${seen})`);
    }
    await sleep(intervalMs);
  }
}

/**
 * Limits use UTC calendar minutes (and days, which start on a minute boundary): wait for the next
 * minute when fewer than `marginMs` are left, so a short sequence of requests stays in one window.
 */
export async function awayFromMinuteEdge(marginMs = 5000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await sleep(left + 100);
}
