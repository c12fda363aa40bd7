import type { RedisClient } from '../../gateway/redis/connect';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin } from '../../gateway/keys/key-admin';
import { UNLIMITED } from './gateway-stack';

type LimitOverrides = { per_minute?: number; per_day?: number; per_month?: number };

/**
 * Creates keys in the Redis key store the way operators do (the key admin), straight on `redis`:
 * a Standard key for GB from 127.0.0.1, limits no test reaches unless given. Returns each new value
 * (and tells `onCreated`, e.g. to collect the values a leak check looks for).
 */
export function keyProvisioner(redis: RedisClient, gatewayConfigFile: string, onCreated: (value: string) => void = () => undefined) {
  const admin = createKeyAdmin(redis, loadGatewayConfig(gatewayConfigFile));
  return async (id: string, limits: LimitOverrides = {}): Promise<string> => {
    const { key } = await admin.create({ id, tier: 'standard', countries: ['GB'], address: '127.0.0.1', ...UNLIMITED, ...limits });
    onCreated(key);
    return key;
  };
}
