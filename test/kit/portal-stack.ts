/**
 * The portal suites' stack: a real redis-server, the data service on the fixture listings, one
 * gateway with the key store in Redis and the holders' portal on (its public URL its own address
 * unless given), and an operator on the same Redis. `stop` ends them all and removes the temp dirs.
 */
import path from 'node:path';
import { fixtureListings } from '../fixtures/listings';
import { cursorSecret, makeTempDir, removeTempDirs, startBackend, startGateway, writeKeysFile, writeListingsFile, type Proc } from './gateway-stack';
import { operatorOf, portalEnv, writePortalConfig } from './portal';
import { startRedis, type RedisServer } from './redis-server';

export interface PortalStack {
  redisServer: RedisServer;
  backend: Proc;
  gateway: Proc;
  /** The portal's public URL (its own address unless `publicUrl` was given). */
  portal: string;
  dir: string;
  configFile: string;
  operator: Awaited<ReturnType<typeof operatorOf>>;
  stop(): Promise<void>;
}

export interface PortalStackOptions {
  /** The gateway config's self-service section (writePortalConfig). */
  selfService?: Record<string, unknown>;
  /** The portal's public URL when it is not its own address (a relay in front of it). */
  publicUrl?: string;
  /**
   * More gateway environment, given the stack's temp dir (files written there are removed by
   * `stop`) and the portal's public URL (an identity provider started here redirects to it).
   */
  env?: (dir: string, publicUrl: string) => Record<string, string> | Promise<Record<string, string>>;
}

export async function startPortalStack(o: PortalStackOptions = {}): Promise<PortalStack> {
  const started: { redisServer?: RedisServer; backend?: Proc; gateway?: Proc; operator?: PortalStack['operator'] } = {};
  const stop = async (): Promise<void> => {
    await started.gateway?.stop();
    await started.backend?.stop();
    started.operator?.close();
    await started.redisServer?.stop();
    removeTempDirs();
  };
  try {
    const redisServer = (started.redisServer = await startRedis());
    const dir = makeTempDir();
    const configFile = path.join(dir, 'gateway.yaml');
    writePortalConfig(configFile, o.selfService);
    const backend = (started.backend = await startBackend(writeListingsFile(fixtureListings(), 'json', dir)));
    const portal = await portalEnv(o.publicUrl);
    const env = { ...portal, ...(await o.env?.(dir, portal.PORTAL_PUBLIC_URL)) };
    const gateway = (started.gateway = await startGateway({
      backendUrl: backend.url, keysFile: writeKeysFile([]), gatewayConfig: configFile, cursorSecret: cursorSecret(),
      env: { KEY_STORE: 'redis', REDIS_URL: redisServer.url, ...env },
    }));
    const operator = (started.operator = await operatorOf(redisServer.url, configFile));
    return { redisServer, backend, gateway, portal: env.PORTAL_PUBLIC_URL, dir, configFile, operator, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
