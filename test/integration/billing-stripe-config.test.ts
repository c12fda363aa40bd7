/**
 * Stripe's settings: `billing.stripe` of the gateway YAML hot-reloaded (prices, pause_when,
 * on_cancel), disputes without STRIPE_API_KEY (logged, ignored), Stripe's API away (503), the
 * providers' listener with several workers, and the public port unchanged by any of it.
 */
import fs from 'node:fs';
import { stringify } from 'yaml';
import { createRedisAccountStore } from '../../gateway/accounts/redis-account-store';
import { runAs } from '../../gateway/audit/actor';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin, type KeyAdmin } from '../../gateway/keys/key-admin';
import { announcedUrl, waitForLine } from '../kit/log-lines';
import { DEFAULT_TIERS, eventually, makeTempDir, writeTempFile } from '../kit/gateway-stack';
import { refusedPort } from '../kit/local-network';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';
import { dispute, invoice, postSigned, stripeEvent, subscription, type StripeEvent } from '../kit/stripe-events';

jest.setTimeout(120_000);

const SECRET = 'whsec_test_config_secret_0123456789abcdef';
let stack: RedisStack;
let config: string;
let hooks: { noApiKey: string; apiAway: string };
let admin: KeyAdmin;
let accounts: ReturnType<typeof createRedisAccountStore>;

const writeConfig = (stripe: Record<string, unknown>): void =>
  fs.writeFileSync(config, stringify({ tiers: DEFAULT_TIERS, billing: { stripe } }));

beforeAll(async () => {
  config = writeTempFile('gateway.yaml', stringify({ tiers: DEFAULT_TIERS }), makeTempDir());
  const base = { GATEWAY_CONFIG: config, HOOKS_PORT: '0', STRIPE_WEBHOOK_SECRET: SECRET };
  stack = await startRedisStack({ gateways: [base, { ...base, STRIPE_API_KEY: 'sk_test_x', STRIPE_API_URL: `http://127.0.0.1:${await refusedPort()}` }] });
  const [noApiKey, apiAway] = await Promise.all(stack.gateways.map((g) => announcedUrl(g, 'hooks listening')));
  hooks = { noApiKey: noApiKey!, apiAway: apiAway! };
  admin = createKeyAdmin(stack.redis, loadGatewayConfig(config));
  accounts = createRedisAccountStore(stack.redis);
});
afterAll(() => stack?.stop());

const send = (event: StripeEvent, url = hooks.noApiKey) => postSigned(url, event, { secret: SECRET });
async function customerWithKey(name: string): Promise<{ id: string; customer: string }> {
  const customer = `cus_${name}`;
  await runAs({ name: 'test', channel: 'library' }, () => accounts.create({ id: `acct-${name}`, name, emails: [`${name}@example.com`], billingCustomer: customer }));
  await admin.create({ id: `key-${name}`, tier: 'standard', countries: ['GB'], address: '127.0.0.1', account: `acct-${name}` });
  return { id: `key-${name}`, customer };
}
/** Rewrites the gateway YAML and waits until every gateway says it reloaded it. */
async function reconfigure(stripe: Record<string, unknown>): Promise<void> {
  const before = stack.gateways.map((g) => g.output.filter((l) => l.includes('"configuration reloaded"')).length);
  writeConfig(stripe);
  await eventually('every gateway reloaded', () => stack.gateways.every((g, i) => g.output.filter((l) => l.includes('"configuration reloaded"')).length > before[i]!), { timeoutMs: 10_000 });
}

it('without STRIPE_API_KEY a dispute is logged and ignored (2xx); with Stripe\'s API away it is answered 503', async () => {
  const k = await customerWithKey('dispute-no-api');
  const event = stripeEvent('charge.dispute.created', dispute('dp_no_api', 'ch_no_api', 'needs_response'));
  const ignored = await send(event);
  expect(ignored.status).toBe(200);
  expect(ignored.body.ignored).toMatch(/STRIPE_API_KEY/);
  await waitForLine(stack.gateways[0]!, event.id);
  const away = await send(stripeEvent('charge.dispute.created', dispute('dp_api_away', 'ch_api_away', 'needs_response')), hooks.apiAway);
  expect(away).toMatchObject({ status: 503, body: { error: 'service_unavailable' } });
  expect((await admin.show(k.id)).status).toBe('active');
});

it('billing.stripe is hot-reloaded: prices, pause_when: unpaid, on_cancel pause and revoke', async () => {
  const k = await customerWithKey('reloaded');
  await send(stripeEvent('customer.subscription.updated', subscription(k.customer, 'active', ['addon-de'])));
  expect((await admin.show(k.id)).countries).toEqual(['GB']);

  await reconfigure({ prices: { 'addon-de': { countries: ['DE', 'GB'] } }, pause_when: 'unpaid', on_cancel: 'pause' });
  await send(stripeEvent('customer.subscription.updated', subscription(k.customer, 'active', ['addon-de'])));
  expect((await admin.show(k.id)).countries).toEqual(['DE', 'GB']);
  // pause_when: unpaid: past_due and a failed renewal wait; unpaid pauses.
  await send(stripeEvent('customer.subscription.updated', subscription(k.customer, 'past_due', ['addon-de'])));
  await send(stripeEvent('invoice.payment_failed', invoice(k.customer)));
  expect((await admin.show(k.id)).status).toBe('active');
  await send(stripeEvent('customer.subscription.updated', subscription(k.customer, 'unpaid', ['addon-de'])));
  expect((await admin.show(k.id)).pause_reasons).toEqual(['unpaid_renewal']);
  await send(stripeEvent('invoice.paid', invoice(k.customer)));
  expect((await admin.show(k.id)).status).toBe('active');
  // on_cancel: pause holds unpaid_renewal (a new subscription that is active settles it).
  await send(stripeEvent('customer.subscription.deleted', subscription(k.customer, 'canceled', ['addon-de'])));
  expect((await admin.show(k.id)).pause_reasons).toEqual(['unpaid_renewal']);

  await reconfigure({ on_cancel: 'revoke' });
  const r = await customerWithKey('revoked-on-cancel');
  await send(stripeEvent('customer.subscription.deleted', subscription(r.customer, 'canceled')));
  expect((await admin.show(r.id)).status).toBe('revoked');
});

it('a bad billing.stripe stops start-up with one line naming the file and field', async () => {
  const bad = writeTempFile('gateway.yaml', stringify({ tiers: DEFAULT_TIERS, billing: { stripe: { prices: { p: { countries: ['XX'] } } } } }), makeTempDir());
  const { runToExit, gatewayEnv, writeKeysFile } = await import('../kit/gateway-stack');
  const run = await runToExit('gateway/main.js', gatewayEnv(writeKeysFile([]), bad));
  expect(run.code).toBe(1);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(/billing\.stripe\.prices\.p\.countries/);
});

it('with GATEWAY_WORKERS=2 the providers\' listener answers and applies events', async () => {
  const k = await customerWithKey('workers');
  const g = await stack.startGateway({ GATEWAY_CONFIG: config, HOOKS_PORT: '0', STRIPE_WEBHOOK_SECRET: SECRET, GATEWAY_WORKERS: '2' });
  const url = await announcedUrl(g, 'hooks listening');
  expect((await send(stripeEvent('invoice.payment_failed', invoice(k.customer)), url)).status).toBe(200);
  expect((await admin.show(k.id)).pause_reasons).toEqual(['unpaid_renewal']);
});
