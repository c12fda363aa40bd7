import { EventEmitter } from 'node:events';
import type { Cluster } from 'ioredis';
import { noResendOfWritten, WRITTEN_THEN_CLOSED } from '../../gateway/redis/connect';
import { isExpectedRedisError } from '../../gateway/redis/expected-errors';
import { mayHaveApplied } from '../../gateway/usage/usage-model';

// The cluster follows (sends again after a slot refresh) exactly the message "Connection is closed.";
// a node flushing its written commands when its connection drops must not use it. The whole path,
// with a real cluster and a cut connection, is redis-cluster-no-resend.test.ts.
function nodeOf(cluster: EventEmitter): { flushed: Error[]; flushQueue(error: Error, options?: unknown): void } {
  const node = {
    flushed: [] as Error[],
    flushQueue(error: Error): void {
      this.flushed.push(error);
    },
  };
  cluster.emit('+node', node);
  return node;
}

it('a written command failed by its dropped connection gets a message the cluster does not follow, still an outage to callers', () => {
  const cluster = new EventEmitter();
  noResendOfWritten(cluster as unknown as Cluster);
  const node = nodeOf(cluster);
  node.flushQueue(new Error('Connection is closed.'));
  expect(node.flushed[0]!.message).toBe(WRITTEN_THEN_CLOSED);
  expect(node.flushed[0]!.message).not.toBe('Connection is closed.');
  expect(isExpectedRedisError(node.flushed[0])).toBe(true); // logged and answered as Redis away
  expect(mayHaveApplied(node.flushed[0])).toBe(true); // usage does not count it again
});

it('other flushes pass as they are', () => {
  const cluster = new EventEmitter();
  noResendOfWritten(cluster as unknown as Cluster);
  const node = nodeOf(cluster);
  const other = new Error('Reached the max retries per request limit (which is 1).');
  node.flushQueue(other);
  expect(node.flushed[0]).toBe(other);
});

it('a node without flushQueue (another ioredis) is left alone', () => {
  const cluster = new EventEmitter();
  noResendOfWritten(cluster as unknown as Cluster);
  const node = {};
  expect(() => cluster.emit('+node', node)).not.toThrow();
  expect(node).toEqual({});
});
