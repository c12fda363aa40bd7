/**
 * A stack for the leaked-key suites: a real redis-server (the Redis key store), a data service,
 * gateways sharing them, each with its providers' listener (HOOKS_PORT) and GitHub's key list
 * served by a local server or read from a file; a webhook receiver verifying every delivery; the
 * first gateway with the admin API, the console and the holders' portal.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { stringify } from 'yaml';
import { readyAdminUrl } from './admin-api';
import { keyListFile, makeSigner, startKeyListServer, type KeyListServer, type Signer } from './github-reports';
import type { Proc } from './gateways';
import { DEFAULT_TIERS, KIT_REFUSED_AUTH_PER_MINUTE } from './keys-files';
import { announcedUrl } from './log-lines';
import { operatorOf, portalEnv } from './portal';
import { startRedisStack, type RedisStack } from './redis-stack';
import { eventually } from './timing';
import { webhookKeys } from '../../gateway/webhooks/redis-webhook-queue';

export const ADMIN_TOKEN = 'admin-token-for-leak-tests-0123456789';
const WEBHOOK_SECRET = `whsec_${randomBytes(32).toString('base64')}`;

export interface ReceivedEvent {
  readonly id: string;
  readonly type: string;
  readonly data: Record<string, unknown>;
}

/** Receives the gateways' webhooks, verifying each (a delivery that does not verify is not recorded). */
export class WebhookReceiver {
  readonly events: ReceivedEvent[] = [];
  url = '';
  private readonly verifier = new Webhook(WEBHOOK_SECRET);
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      try {
        const event = this.verifier.verify(Buffer.concat(chunks).toString('utf8'), headers) as { type: string; data: Record<string, unknown> };
        if (!this.events.some((e) => e.id === headers['webhook-id'])) this.events.push({ id: headers['webhook-id']!, type: event.type, data: event.data });
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/events`;
  }
  of(type: string, keyId: string): ReceivedEvent[] {
    return this.events.filter((e) => e.type === type && e.data.key_id === keyId);
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

export interface LeaksStackOptions {
  /** Gateways to start (each with its providers' listener). */
  instances?: number;
  /** GitHub's key list: served by a local server (default) or read from a file. */
  keyList?: 'url' | 'file';
  /** The gateway YAML's `leaks.on_leak` (absent: the default). */
  onLeak?: string;
  /** Environment of every gateway, over the stack's. */
  env?: Record<string, string>;
}

export interface LeaksStack {
  readonly stack: RedisStack;
  readonly gateways: Proc[];
  /** Each gateway's public URL and providers' listener URL, in order. */
  readonly publicUrls: string[];
  readonly hookUrls: string[];
  readonly adminUrl: string;
  readonly portalUrl: string;
  readonly portalPublicUrl: string;
  readonly github: Signer;
  readonly keyList?: KeyListServer;
  readonly keyListPath?: string;
  readonly receiver: WebhookReceiver;
  readonly operator: Awaited<ReturnType<typeof operatorOf>>;
  /** Rewrites the gateway YAML (the gateways reload it). */
  writeConfig(onLeak?: string): void;
  stop(): Promise<void>;
}

export async function startLeaksStack(o: LeaksStackOptions = {}): Promise<LeaksStack> {
  const github = makeSigner('github-test-key-1');
  const keyList = o.keyList === 'file' ? undefined : await startKeyListServer([github]);
  const keyListPath = o.keyList === 'file' ? keyListFile([github]) : undefined;
  const receiver = new WebhookReceiver();
  await receiver.start();
  const stack = await startRedisStack({ gateways: [] });
  const writeConfig = (onLeak?: string): void => fs.writeFileSync(stack.gatewayConfig, stringify({
    tiers: DEFAULT_TIERS, refused_authentication: { per_address_per_minute: KIT_REFUSED_AUTH_PER_MINUTE }, ...(onLeak ? { leaks: { on_leak: onLeak } } : {}),
  }));
  writeConfig(o.onLeak);
  const portal = await portalEnv();
  const common = {
    HOOKS_PORT: '0',
    ...(keyList ? { LEAKS_GITHUB_KEYS_URL: keyList.url } : { LEAKS_GITHUB_KEYS_FILE: keyListPath! }),
    WEBHOOK_URL: receiver.url, WEBHOOK_SECRET, WEBHOOK_POLL_MS: '100', WEBHOOK_RETRY_BASE_MS: '100', WEBHOOK_RETRY_MAX_MS: '400',
    ...o.env,
  };
  const gateways = await Promise.all(Array.from({ length: o.instances ?? 1 }, (_, i) =>
    stack.startGateway(i === 0 ? { ...common, ADMIN_TOKEN, ADMIN_PORT: '0', ...portal } : common)));
  const operator = await operatorOf(stack.redisServer.url, stack.gatewayConfig);
  const hookUrls = await Promise.all(gateways.map((g) => announcedUrl(g, 'hooks listening')));
  const adminUrl = await readyAdminUrl(gateways[0]!, ADMIN_TOKEN);
  // The key tools queue key events once a gateway delivers them (its marker in Redis).
  await eventually('the webhook delivery marker', async () => (await stack.redis.exists(webhookKeys.on)) === 1);
  return {
    stack, gateways, publicUrls: gateways.map((g) => g.url), hookUrls, adminUrl,
    portalUrl: `http://127.0.0.1:${portal.PORTAL_PORT}`, portalPublicUrl: portal.PORTAL_PUBLIC_URL,
    github, ...(keyList ? { keyList } : {}), ...(keyListPath ? { keyListPath } : {}), receiver, operator, writeConfig,
    async stop() {
      operator.close();
      await stack.stop();
      await receiver.stop();
      await keyList?.close();
    },
  };
}
