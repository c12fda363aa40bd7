import type { RedisTopology } from '../config/redis-env';
import { whenReady, type RedisClient } from './connect';
import type { RedisHealth } from './health';

export type StartupOutcome = { readonly kind: 'ready' } | { readonly kind: 'away' } | { readonly kind: 'refused'; readonly line: string };

/**
 * Start-up's look at the shared Redis: ready, away (not answering within `timeoutMs`: the gateway
 * starts and counts per instance until it answers), or refused (credentials, ACL, TLS, a cluster
 * node given as one Redis: the caller exits 1 with the line). `probe` runs the commands the caller
 * needs (e.g. a counter read) so that an ACL refusal is found now, not by the first customer.
 */
export async function checkAtStartup(
  client: RedisClient,
  topology: RedisTopology,
  health: RedisHealth,
  probe: () => Promise<unknown>,
  timeoutMs: number,
): Promise<StartupOutcome> {
  const refused = (line: string): StartupOutcome => ({ kind: 'refused', line });
  const refusal = new Promise<false>((resolve) => health.onRefusal(() => resolve(false)));
  const ready = await Promise.race([whenReady(client, timeoutMs), refusal]);
  const line = health.refusal();
  if (line !== undefined) return refused(line);
  if (!ready) return { kind: 'away' };
  if (topology.kind === 'single') {
    // A cluster node answers the keys of its own slots and MOVED for the rest: refuse it before the
    // first MOVED, whichever key that falls on. (A user without INFO permission is checked by the probe.)
    const info = await client.info('cluster').catch(() => '');
    if (/^cluster_enabled:1/m.test(info)) {
      return refused(`${topology.variable}: ${topology.where} is a node of a Redis Cluster (MOVED); give the nodes as REDIS_CLUSTER_NODES`);
    }
  }
  try {
    await probe();
  } catch (err) {
    const probeRefusal = health.report(err);
    if (probeRefusal !== undefined) return refused(probeRefusal);
    return { kind: 'away' };
  }
  return { kind: 'ready' };
}
