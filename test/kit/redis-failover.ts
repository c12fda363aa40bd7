/**
 * What the failover tests measure, the same way for a cluster and a sentinel set: a steady load
 * that must never see a 500 or wait without an answer, and bursts on fresh keys that tell when
 * counting is shared and exact again.
 */
import { getWithKey, type Answer } from './gateway-stack';

export interface LoadReport {
  statuses: Record<number, number>;
  /** Requests that got no answer in time (a hang) or failed at the connection. */
  failures: string[];
  slowestMs: number;
}

/** Requests with `keyValue` round-robin over `urls` until `stop()`; each must be answered within `timeoutMs`. */
export function steadyLoad(urls: string[], keyValue: string, timeoutMs: number): { stop(): Promise<LoadReport> } {
  const report: LoadReport = { statuses: {}, failures: [], slowestMs: 0 };
  let running = true;
  const worker = async (offset: number): Promise<void> => {
    for (let i = offset; running; i++) {
      const started = Date.now();
      try {
        const a = await getWithKey(urls[i % urls.length]!, '/v1/ping', keyValue, { timeoutMs });
        report.statuses[a.status] = (report.statuses[a.status] ?? 0) + 1;
      } catch (err) {
        report.failures.push((err as Error).message);
      }
      report.slowestMs = Math.max(report.slowestMs, Date.now() - started);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const workers = [0, 1, 2].map(worker);
  return {
    async stop() {
      running = false;
      await Promise.all(workers);
      return report;
    },
  };
}

export interface Burst {
  /** Milliseconds after the kill when the burst started. */
  atMs: number;
  accepted: number;
  statuses: number[];
  exact: boolean;
}

/**
 * `2 × limit` concurrent requests with a fresh key over every gateway: exact when exactly `limit`
 * are accepted and the rest refused 429 (no 503: every instance counted it in Redis).
 */
export async function burst(urls: string[], keyValue: string, limit: number, killedAt: number): Promise<Burst> {
  const atMs = Date.now() - killedAt;
  const answers: Answer[] = await Promise.all(
    Array.from({ length: 2 * limit }, (_, i) => getWithKey(urls[i % urls.length]!, '/v1/ping', keyValue, { timeoutMs: 10_000 })),
  );
  const statuses = answers.map((a) => a.status);
  const accepted = statuses.filter((s) => s === 200).length;
  return { atMs, accepted, statuses, exact: accepted === limit && statuses.every((s) => s === 200 || s === 429) };
}
