import type { Logger } from 'pino';
import type { Subscriber } from '../redis/subscriber';
import type { KeyCache } from './key-cache';
import { redisKeys } from './redis-layout';

/**
 * Keeps `cache` told of key changes: every message on the change channel drops the hashes it names
 * (a message that cannot be read drops everything). The store owns its subscription: ioredis's own
 * resubscription on reconnect is a promise nobody awaits, so a SUBSCRIBE that timed out on a
 * flapping connection was an unhandled rejection that took the process down. Here every
 * (re)subscription is made, awaited and handled; on each, nothing cached is trusted any more.
 */
export function followKeyChanges(subscriber: Subscriber, cache: KeyCache, logger: Logger): void {
  subscriber.on('message', (_channel: string, message: string) => {
    try {
      const { hashes } = JSON.parse(message) as { hashes?: unknown };
      cache.invalidate(Array.isArray(hashes) ? hashes.filter((h): h is string => typeof h === 'string') : []);
    } catch {
      cache.invalidate();
    }
  });
  subscriber.options.autoResubscribe = false;
  let subscribeFailed = false;
  subscriber.on('ready', () => {
    subscriber
      .subscribe(redisKeys.changes)
      .then(() => {
        cache.distrustAll();
        cache.setSubscribed(true);
        if (subscribeFailed) logger.info('key change subscription back');
        subscribeFailed = false;
      })
      .catch((err: Error) => {
        // Logged once until it works again; the connection is dropped so it reconnects and retries.
        if (!subscribeFailed) logger.warn({ err: err.message }, 'key change subscription failed: retrying');
        subscribeFailed = true;
        subscriber.disconnect(true);
      });
  });
  subscriber.on('close', () => cache.setSubscribed(false));
}
