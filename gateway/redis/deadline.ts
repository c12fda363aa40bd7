/**
 * Rejects with a "timed out" error when `work` has not settled within `ms`. ioredis' own command
 * timeout starts only once a command is written to a connection; a Redis Cluster client whose node
 * just died retries the command internally (slot refresh, up to 16 times) before it is written
 * anywhere, which can take seconds. The request must not wait for that: this bounds it. Callers
 * treat the error as a timeout (the command may still run later).
 */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Command timed out (no answer within ${ms} ms)`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
