import type { RedisClient } from '../redis/connect';
import type { Logger } from 'pino';
import { DEMO_KEY_HASHES, demoKeyWarning, isLoopbackHost } from './demo-keys';
import type { KeyStore } from './key-record';
import { redisKeys } from './redis-layout';

/** How often the key store is checked again for demo keys (a reload or an import may add one). */
const RECHECK_MS = 30_000;

export type DemoKeySource = { readonly file: KeyStore } | { readonly redis: RedisClient };

/**
 * docs/guarantees.md: a gateway that loads a demo key while listening on a non-loopback address logs a
 * warning naming it. The five demo hashes are looked up in the store at start-up and every 30 s
 * (five map look-ups, or one MGET); each newly seen demo key is warned about once. On loopback
 * nothing is checked: that is what the demo keys are for.
 */
export function watchDemoKeys(host: string, logger: Logger, source: DemoKeySource): { close(): void } {
  if (isLoopbackHost(host)) return { close: () => undefined };
  const warned = new Set<string>();
  const hashes = [...DEMO_KEY_HASHES.keys()];

  async function present(): Promise<string[]> {
    if ('file' in source) {
      const ids: string[] = [];
      for (const hash of hashes) {
        const found = source.file.lookup(hash);
        const lookup = found instanceof Promise ? await found : found;
        if (lookup.kind === 'found') ids.push(lookup.record.id);
      }
      return ids;
    }
    if (source.redis.status !== 'ready') return [];
    // One GET each (not MGET): the pointers may sit in different cluster slots.
    const redis = source.redis;
    const ids = await Promise.all(hashes.map((h) => redis.get(redisKeys.byHash(h))));
    return ids.filter((id): id is string => id !== null);
  }

  const check = (): void => {
    present()
      .then((ids) => {
        const fresh = ids.filter((id) => !warned.has(id));
        if (!fresh.length) return;
        for (const id of fresh) warned.add(id);
        logger.warn({ reason: 'demo_keys_exposed', key_ids: fresh, host }, demoKeyWarning(fresh, host));
      })
      .catch(() => undefined);
  };
  check();
  const onReady = (): void => check();
  if ('redis' in source) source.redis.on('ready', onReady);
  const timer = setInterval(check, RECHECK_MS);
  timer.unref();
  return {
    close() {
      clearInterval(timer);
      if ('redis' in source) source.redis.off('ready', onReady);
    },
  };
}
