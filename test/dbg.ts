import { getWithKey, startStack, sleep } from './kit/gateway-stack';
import { startSentinelSet } from './kit/redis-topologies';
(async () => {
  const set = await startSentinelSet();
  const stack = await startStack({ keys: [{ id: 'k', value: 'kkkkkkkkkkkkkkkkkkk', tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }], gateways: [{ REDIS_SENTINELS: set.sentinelList, REDIS_SENTINEL_MASTER: set.masterName, DEBUG: 'ioredis:SentinelConnector,ioredis:redis' }] });
  console.log((await getWithKey(stack.url, '/v1/ping', 'kkkkkkkkkkkkkkkkkkk')).status);
  const n = stack.gateway.output.length;
  await set.master.kill();
  await sleep(6000);
  console.log('new master', await set.currentMasterPort(), 'old', set.master.port, 'replica', set.replica.port);
  console.log((await getWithKey(stack.url, '/v1/ping', 'kkkkkkkkkkkkkkkkkkk')).headers.ratelimit);
  console.log(stack.gateway.output.slice(n).filter((l) => !l.includes('answered')).slice(-60).join('\n'));
  await stack.stop();
  await set.stop();
})();
