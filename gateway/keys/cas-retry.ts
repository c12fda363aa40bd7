import { ApiError } from '../errors';

/** What one compare-and-set attempt returns when another writer changed the value first. */
export const LOST = Symbol('lost to another writer');

/** How many times a change is read and tried again before the caller is told to retry. */
const ATTEMPTS = 10;

/** 503 with `Retry-After: 1`: the record kept changing under this writer. */
export const concurrentChange = (): ApiError => new ApiError('service_unavailable', {}, 1, 'The key is being changed concurrently; retry.');

/**
 * Runs `attempt` (read, change, compare-and-set) until it does not report `LOST`: the one retry
 * loop of every optimistic write of the key store. After ATTEMPTS lost races the change is given up
 * with `concurrentChange()` (nothing was written by the lost attempts).
 */
export async function retryCompareAndSet<T>(attempt: () => Promise<T | typeof LOST>): Promise<T> {
  for (let i = 0; i < ATTEMPTS; i++) {
    const result = await attempt();
    if (result !== LOST) return result;
  }
  throw concurrentChange();
}
