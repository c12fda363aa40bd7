import { ApiError } from '../errors';
import { LOST, untilSet } from '../audit/cas-loop';

export { LOST };

/** 503 with `Retry-After: 1`: the record kept changing under this writer. */
export const concurrentChange = (): ApiError => new ApiError('service_unavailable', {}, 1, 'The key is being changed concurrently; retry.');

/**
 * Runs `attempt` (read, change, compare-and-set) until it does not report `LOST`: the one retry
 * loop of every optimistic write of the key store. After 10 lost races the change is given up
 * with `concurrentChange()` (nothing was written by the lost attempts).
 */
export const retryCompareAndSet = <T>(attempt: () => Promise<T | typeof LOST>): Promise<T> => untilSet(attempt, concurrentChange);
