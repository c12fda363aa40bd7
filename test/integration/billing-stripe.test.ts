/**
 * Stripe moving keys by itself, on two gateway instances sharing one redis-server: events signed
 * with the `stripe` package's test-header helper, with Stripe's field names, posted to each
 * instance's providers' listener; a stand-in for Stripe's API answers a dispute's charge.
 */
import Stripe from 'stripe';
import { stringify } from 'yaml';
import { createRedisAccountStore } from '../../gateway/accounts/redis-account-store';
import { runAs } from '../../gateway/audit/actor';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin, type KeyAdmin } from '../../gateway/keys/key-admin';
import { redisKeys } from '../../gateway/keys/redis-layout';
import { announcedUrl } from '../kit/log-lines';
import { DEFAULT_TIERS, eventually, getWithKey, makeTempDir, seenByAll, sleep, writeTempFile } from '../kit/gateway-stack';
import { startStub, type Stub } from '../kit/local-network';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';
import {
  dispute, invoice, postSigned, rawPost, startJsonServer, stripeApiStandIn, stripeEvent, subscription, type JsonServer, type StripeEvent,
} from '../kit/stripe-events';

jest.setTimeout(120_000);

const OLD_SECRET = 'whsec_test_old_secret_0123456789abcdef';
const NEW_SECRET = 'whsec_test_new_secret_0123456789abcdef';
const charges = new Map<string, string | null>();

let stack: RedisStack;
let stripeApi: JsonServer;
let receiver: JsonServer;
let insights: Stub;
let hooks: string[];
let admin: KeyAdmin;
let accounts: ReturnType<typeof createRedisAccountStore>;

beforeAll(async () => {
  [stripeApi, receiver, insights] = await Promise.all([
    stripeApiStandIn(charges),
    startJsonServer(() => ({ status: 200, body: {} })),
    startStub((_req, res) => { res.setHeader('content-type', 'application/json'); res.end('{"market":"steady"}'); }),
  ]);
  const config = writeTempFile('gateway.yaml', stringify({
    tiers: DEFAULT_TIERS,
    insights: { upstream: insights.url },
    billing: { stripe: { prices: { 'base-gb': { countries: ['GB'] }, 'addon-fr': { countries: ['FR'] }, 'plan-advanced': { tier: 'advanced' } } } },
  }), makeTempDir());
  const env = {
    GATEWAY_CONFIG: config, HOOKS_PORT: '0', STRIPE_WEBHOOK_SECRET: `${OLD_SECRET},${NEW_SECRET}`, STRIPE_API_KEY: 'sk_test_stand_in',
    STRIPE_API_URL: stripeApi.url, WEBHOOK_URL: `${receiver.url}/events`, WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, WEBHOOK_POLL_MS: '100',
  };
  stack = await startRedisStack({ persistent: true, gateways: [env, env] });
  hooks = await Promise.all(stack.gateways.map((g) => announcedUrl(g, 'hooks listening')));
  admin = createKeyAdmin(stack.redis, loadGatewayConfig(config));
  accounts = createRedisAccountStore(stack.redis);
});
afterAll(async () => {
  await stack?.stop();
  await Promise.all([stripeApi?.close(), receiver?.close(), insights?.close()]);
});

const urls = (): string[] => stack.gateways.map((g) => g.url);
const send = (event: StripeEvent, i = 0, secret = NEW_SECRET) => postSigned(hooks[i]!, event, { secret });

/** An account naming `customer` with one key; returns the key's id and value. */
async function customerWithKey(name: string): Promise<{ id: string; value: string; customer: string }> {
  const customer = `cus_${name}`;
  await runAs({ name: 'test', channel: 'library' }, () => accounts.create({ id: `acct-${name}`, name, emails: [`${name}@example.com`], billingCustomer: customer }));
  const { key } = await admin.create({ id: `key-${name}`, tier: 'standard', countries: ['GB'], address: '127.0.0.1', account: `acct-${name}` });
  return { id: `key-${name}`, value: key, customer };
}
const reasonsOf = async (id: string) => (await admin.show(id)).pause_reasons ?? [];
const auditOf = async (id: string) => (await admin.readAudit({ keyId: id, limit: 100 })).entries;
const hooksOf = (keyId: string, type?: string) =>
  receiver.received.map((r) => r.body as { type: string; data: Record<string, unknown> }).filter((e) => e?.data?.key_id === keyId && (!type || e.type === type));

describe('a failed renewal pauses, a payment resumes', () => {
  it('past_due pauses the account\'s key on both instances within a second (403 key_paused); invoice.paid resumes it on both', async () => {
    const k = await customerWithKey('renewal');
    expect((await getWithKey(stack.url, '/v1/ping', k.value)).status).toBe(200);
    const past = await send(stripeEvent('customer.subscription.updated', subscription(k.customer, 'past_due', ['base-gb'])));
    expect(past.status).toBe(200);
    await seenByAll(urls(), k.value, 403, Date.now(), 1000);
    const refused = await getWithKey(stack.gateways[1]!.url, '/v1/ping', k.value);
    expect(refused.body).toMatchObject({ error: 'key_paused' });
    expect(await reasonsOf(k.id)).toEqual(['unpaid_renewal']);

    const paid = await send(stripeEvent('invoice.paid', invoice(k.customer)), 1, OLD_SECRET);
    expect(paid.status).toBe(200);
    await seenByAll(urls(), k.value, 200, Date.now(), 1000);
    expect((await admin.show(k.id)).status).toBe('active');

    // Audited under the event, channel billing; the webhooks say where the change came from.
    const audit = (await auditOf(k.id)).filter((e) => e.action === 'pause' || e.action === 'settle');
    expect(audit.map((e) => e.action)).toEqual(expect.arrayContaining(['pause', 'settle']));
    expect(audit.every((e) => e.actor.startsWith('billing:stripe:evt_') && e.channel === 'billing')).toBe(true);
    await eventually('the key.paused and key.settled webhooks', () => hooksOf(k.id, 'key.settled').length === 1 && hooksOf(k.id, 'key.paused').length === 1);
    expect(hooksOf(k.id, 'key.paused')[0]!.data).toMatchObject({ pause_reasons: ['unpaid_renewal'], source: 'billing' });
    expect(hooksOf(k.id, 'key.settled')[0]!.data).toMatchObject({ source: 'billing' });
  });

  it('a renewal invoice that fails pauses; one for another reason does not', async () => {
    const k = await customerWithKey('invoice-failed');
    expect((await send(stripeEvent('invoice.payment_failed', invoice(k.customer, 'subscription_create')))).status).toBe(200);
    expect(await reasonsOf(k.id)).toEqual([]);
    const failed = invoice(k.customer);
    expect((await send(stripeEvent('invoice.payment_failed', failed))).status).toBe(200);
    expect(await admin.show(k.id)).toMatchObject({ pause_reasons: ['unpaid_renewal'], billing_invoice_url: failed.hosted_invoice_url });
    // The next failed attempt's invoice replaces the link; the payment removes it with the reason.
    const next = invoice(k.customer);
    await send(stripeEvent('invoice.payment_failed', next), 1);
    expect((await admin.show(k.id)).billing_invoice_url).toBe(next.hosted_invoice_url);
    await send(stripeEvent('invoice.paid', invoice(k.customer)));
    expect(await admin.show(k.id)).not.toHaveProperty('billing_invoice_url');
  });
});

describe('disputes', () => {
  it('a dispute and an unpaid renewal: the payment settles one reason and the key stays paused until the dispute is won', async () => {
    const k = await customerWithKey('dispute-won');
    charges.set('ch_dispute_won', k.customer);
    expect((await send(stripeEvent('charge.dispute.created', dispute('dp_won', 'ch_dispute_won', 'needs_response')))).status).toBe(200);
    expect((await send(stripeEvent('invoice.payment_failed', invoice(k.customer)), 1)).status).toBe(200);
    expect(await reasonsOf(k.id)).toEqual(['payment_dispute', 'unpaid_renewal']);
    expect((await send(stripeEvent('invoice.paid', invoice(k.customer)))).status).toBe(200);
    expect(await reasonsOf(k.id)).toEqual(['payment_dispute']);
    await seenByAll(urls(), k.value, 403, Date.now(), 1000);
    expect((await send(stripeEvent('charge.dispute.closed', dispute('dp_won', 'ch_dispute_won', 'won')), 1)).status).toBe(200);
    await seenByAll(urls(), k.value, 200, Date.now(), 1000);
  });

  it('a dispute lost keeps the key paused, now for the unpaid renewal', async () => {
    const k = await customerWithKey('dispute-lost');
    charges.set('ch_dispute_lost', k.customer);
    await send(stripeEvent('charge.dispute.created', dispute('dp_lost', 'ch_dispute_lost', 'needs_response')));
    expect(await reasonsOf(k.id)).toEqual(['payment_dispute']);
    expect((await send(stripeEvent('charge.dispute.closed', dispute('dp_lost', 'ch_dispute_lost', 'lost')))).status).toBe(200);
    expect(await reasonsOf(k.id)).toEqual(['unpaid_renewal']);
    expect((await getWithKey(stack.url, '/v1/ping', k.value)).status).toBe(403);
  });

  it('held while any dispute of the account is open', async () => {
    const k = await customerWithKey('two-disputes');
    charges.set('ch_two_a', k.customer);
    charges.set('ch_two_b', k.customer);
    await send(stripeEvent('charge.dispute.created', dispute('dp_two_a', 'ch_two_a', 'needs_response')));
    await send(stripeEvent('charge.dispute.created', dispute('dp_two_b', 'ch_two_b', 'needs_response')), 1);
    await send(stripeEvent('charge.dispute.closed', dispute('dp_two_a', 'ch_two_a', 'won')));
    expect(await reasonsOf(k.id)).toEqual(['payment_dispute']);
    await send(stripeEvent('charge.dispute.closed', dispute('dp_two_b', 'ch_two_b', 'warning_closed')), 1);
    expect(await reasonsOf(k.id)).toEqual([]);
  });

  it('a charge Stripe does not know: logged, 2xx, nothing changed', async () => {
    const k = await customerWithKey('unknown-charge');
    const answer = await send(stripeEvent('charge.dispute.created', dispute('dp_unknown', 'ch_nobody_knows', 'needs_response')));
    expect(answer.status).toBe(200);
    expect(await reasonsOf(k.id)).toEqual([]);
  });
});

describe('entitlements from the subscription\'s prices', () => {
  it('adding a price that maps FR makes the same key cover FR; an upgrade makes /v1/insights answer as for an Advanced key', async () => {
    const k = await customerWithKey('prices');
    expect((await getWithKey(stack.url, '/v1/properties?country=FR', k.value)).body).toMatchObject({ error: 'country_not_entitled' });
    expect((await getWithKey(stack.url, '/v1/insights/market', k.value)).body).toMatchObject({ error: 'upgrade_required' });

    await send(stripeEvent('customer.subscription.updated', subscription(k.customer, 'active', ['base-gb', 'addon-fr', 'not-mapped'])));
    expect((await admin.show(k.id)).countries).toEqual(['FR', 'GB']);
    await seenByAll(urls(), k.value, 200, Date.now(), 1000);
    for (const url of urls()) await eventually('FR answered', async () => (await getWithKey(url, '/v1/properties?country=FR', k.value)).status === 200, { timeoutMs: 1000 });

    await send(stripeEvent('customer.subscription.updated', subscription(k.customer, 'active', ['base-gb', 'addon-fr', 'plan-advanced'])), 1);
    expect((await admin.show(k.id)).tier).toBe('advanced');
    for (const url of urls()) await eventually('insights answered', async () => (await getWithKey(url, '/v1/insights/market', k.value)).status === 200, { timeoutMs: 1000 });

    // Removing the add-on removes what it gave; the plan's removal falls back to standard.
    await send(stripeEvent('customer.subscription.updated', subscription(k.customer, 'active', ['base-gb'])));
    expect(await admin.show(k.id)).toMatchObject({ countries: ['GB'], tier: 'standard' });
    await eventually('key.changed webhooks', () => hooksOf(k.id, 'key.changed').length >= 3);
    expect(hooksOf(k.id, 'key.changed').map((e) => e.data.source)).toEqual(['billing', 'billing', 'billing']);
    expect((await auditOf(k.id)).filter((e) => e.action === 'change').every((e) => e.actor.startsWith('billing:stripe:evt_') && e.channel === 'billing')).toBe(true);
  });
});

describe('exactly once, in any order', () => {
  it('the same event ten times at once to both instances: one change, one audit entry, one webhook', async () => {
    const k = await customerWithKey('ten-times');
    const auditBefore = (await auditOf(k.id)).length;
    const event = stripeEvent('customer.subscription.updated', subscription(k.customer, 'past_due'));
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => send(event, i % 2)));
    expect(answers.map((a) => a.status).filter((s) => s !== 200)).toEqual([]);
    // A repeated pause would change nothing anyway; what shows the event applied once is the claim:
    // one delivery applied it, the other 19 waited for it (or came after) and answered as duplicates.
    expect(answers.filter((a) => (a.body as { duplicate?: boolean }).duplicate !== true)).toHaveLength(1);
    expect(await reasonsOf(k.id)).toEqual(['unpaid_renewal']);
    expect((await auditOf(k.id)).length - auditBefore).toBe(1);
    await eventually('the webhook', () => hooksOf(k.id, 'key.paused').length >= 1);
    await sleep(1000);
    expect(hooksOf(k.id, 'key.paused')).toHaveLength(1);
  });

  it('an event delivered again after an operator settled the key changes nothing (its id was applied)', async () => {
    const k = await customerWithKey('replayed');
    const event = stripeEvent('customer.subscription.updated', subscription(k.customer, 'past_due'));
    expect((await send(event)).status).toBe(200);
    expect(await reasonsOf(k.id)).toEqual(['unpaid_renewal']);
    await admin.settle(k.id);
    const again = await send(event, 1);
    expect(again).toMatchObject({ status: 200, body: { received: true, duplicate: true } });
    expect(await reasonsOf(k.id)).toEqual([]);
    // An applied id is kept at least 30 days (Stripe retries a delivery for 3).
    expect(await stack.redis.ttl(`lgw:billing:stripe:event:${event.id}`)).toBeGreaterThanOrEqual(30 * 86_400 - 60);
  });

  it('a late past_due older than an invoice.paid already applied changes nothing', async () => {
    const k = await customerWithKey('late');
    const now = Math.floor(Date.now() / 1000);
    const auditBefore = (await auditOf(k.id)).length;
    await send(stripeEvent('invoice.paid', invoice(k.customer), { created: now }));
    const late = await send(stripeEvent('customer.subscription.updated', subscription(k.customer, 'past_due'), { created: now - 60 }), 1);
    expect(late.status).toBe(200);
    expect(await reasonsOf(k.id)).toEqual([]);
    expect((await auditOf(k.id)).length).toBe(auditBefore);
  });

  // The interleaving where the older event's change lands after the newer one's is forced in
  // billing-convergence.test.ts; here, the outcome under real concurrency on two instances.
  it('two events for one account at once on two instances: the newer one decides, whichever lands last', async () => {
    const k = await customerWithKey('races');
    const base = Math.floor(Date.now() / 1000) + 10;
    for (let round = 0; round < 8; round++) {
      const pausedWins = round % 2 === 0;
      const [older, newer] = pausedWins
        ? [stripeEvent('invoice.paid', invoice(k.customer), { created: base + 2 * round }), stripeEvent('customer.subscription.updated', subscription(k.customer, 'past_due'), { created: base + 2 * round + 1 })]
        : [stripeEvent('customer.subscription.updated', subscription(k.customer, 'past_due'), { created: base + 2 * round }), stripeEvent('invoice.paid', invoice(k.customer), { created: base + 2 * round + 1 })];
      const answers = await Promise.all(round % 4 < 2 ? [send(older, 0), send(newer, 1)] : [send(newer, 0), send(older, 1)]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      expect({ round, reasons: await reasonsOf(k.id) }).toEqual({ round, reasons: pausedWins ? ['unpaid_renewal'] : [] });
    }
  });

  it('an event for a customer no account names: 2xx, nothing changed, one log line', async () => {
    const event = stripeEvent('customer.subscription.updated', subscription('cus_nobody_names', 'past_due'));
    const answer = await send(event);
    expect(answer.status).toBe(200);
    const named = () => stack.gatewayOutput().filter((l) => l.includes(event.id) && l.includes('no account names'));
    await eventually('the event logged', () => named().length >= 1);
    expect(named()).toHaveLength(1);
  });
});

describe('the endpoint secret', () => {
  it('both secrets of a roll verify; any other does not; each answer has its access line', async () => {
    const k = await customerWithKey('roll');
    const [oldOne, newOne] = [stripeEvent('invoice.payment_failed', invoice(k.customer)), stripeEvent('invoice.paid', invoice(k.customer))];
    expect((await postSigned(hooks[0]!, oldOne, { secret: OLD_SECRET })).status).toBe(200);
    expect(await reasonsOf(k.id)).toEqual(['unpaid_renewal']);
    expect((await postSigned(hooks[1]!, newOne, { secret: NEW_SECRET })).status).toBe(200);
    expect(await reasonsOf(k.id)).toEqual([]);
    const third = await postSigned(hooks[0]!, stripeEvent('invoice.payment_failed', invoice(k.customer)), { secret: 'whsec_test_third_secret_0123456789abcdef' });
    expect(third.status).toBe(400);
    expect(await reasonsOf(k.id)).toEqual([]);
    const lines = stack.gatewayOutput().filter((l) => l.includes('"msg":"hook answered"') && l.includes('"provider":"stripe"'));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.some((l) => l.includes('stripe-signature') || l.includes('v1='))).toBe(false);
  });
});

describe('bad input changes nothing and is never a 500', () => {
  it.each([
    ['no signature', (e: StripeEvent) => postSigned(hooks[0]!, e, { secret: NEW_SECRET, signature: null }), 400],
    ['a wrong secret', (e: StripeEvent) => postSigned(hooks[0]!, e, { secret: 'whsec_someone_elses_secret_0123456789' }), 400],
    ['a timestamp 10 minutes old', (e: StripeEvent) => postSigned(hooks[0]!, e, { secret: NEW_SECRET, timestamp: Math.floor(Date.now() / 1000) - 600 }), 400],
    ['a body changed after signing', (e: StripeEvent) => postSigned(hooks[0]!, e, { secret: NEW_SECRET, tamper: (b) => b.replace('past_due', 'active__') }), 400],
    ['2 MiB', (e: StripeEvent) => {
      const body = Buffer.from(JSON.stringify({ ...e, padding: 'x'.repeat(2 * 1024 * 1024) }));
      const signature = Stripe.webhooks.generateTestHeaderString({ payload: body.toString('utf8'), secret: NEW_SECRET });
      return rawPost(hooks[0]!, '/hooks/stripe', { 'stripe-signature': signature, 'content-length': String(body.length) }, [body.subarray(0, 64 * 1024)]);
    }, 400],
    ['invalid JSON under a valid signature', (_e: StripeEvent) => postSigned(hooks[0]!, '{"id": "evt_broken", ', { secret: NEW_SECRET }), 400],
    ['an event type not used', (e: StripeEvent) => postSigned(hooks[0]!, { ...e, type: 'customer.created' }, { secret: NEW_SECRET }), 200],
  ])('%s', async (_name, post, status) => {
    const k = await customerWithKey(`bad-${_name.replace(/\W+/g, '-')}`);
    const auditBefore = await stack.redis.xlen(redisKeys.audit);
    const answer = await post(stripeEvent('customer.subscription.updated', subscription(k.customer, 'past_due')));
    expect(answer.status).toBe(status);
    if (status === 400) expect(answer.body).toMatchObject({ error: 'invalid_parameter', message: expect.any(String) });
    expect(await reasonsOf(k.id)).toEqual([]);
    expect(await stack.redis.xlen(redisKeys.audit)).toBe(auditBefore);
  });
});

it('a body over 1 MiB is refused before it is all read: declared (Content-Length) or sent chunked', async () => {
  const signature = { 'stripe-signature': 't=1,v1=00', 'content-type': 'application/json' };
  const declared = await rawPost(hooks[0]!, '/hooks/stripe', { ...signature, 'content-length': String(2 * 1024 * 1024) }, [Buffer.from('{')]);
  expect(declared).toMatchObject({ status: 400, body: { error: 'invalid_parameter', parameter: 'body' } });
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const framed = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
  const chunked = await rawPost(hooks[1]!, '/hooks/stripe', { ...signature, 'transfer-encoding': 'chunked' }, Array.from({ length: 32 }, () => framed));
  expect(chunked).toMatchObject({ status: 400, body: { error: 'invalid_parameter', parameter: 'body' } });
});

it('another method than POST on /hooks/stripe is 405 with Allow: POST', async () => {
  const res = await fetch(`${hooks[0]}/hooks/stripe`);
  expect(res.status).toBe(405);
  expect(res.headers.get('allow')).toBe('POST');
  expect(await res.json()).toMatchObject({ error: 'method_not_allowed' });
});

describe('operator overrides', () => {
  it('an operator\'s settle without a reason clears every reason', async () => {
    const k = await customerWithKey('operator-settle');
    charges.set('ch_operator', k.customer);
    await send(stripeEvent('charge.dispute.created', dispute('dp_operator', 'ch_operator', 'needs_response')));
    await send(stripeEvent('invoice.payment_failed', invoice(k.customer)));
    expect(await reasonsOf(k.id)).toEqual(['payment_dispute', 'unpaid_renewal']);
    expect((await admin.settle(k.id)).status).toBe('active');
  });

  it('an operator\'s pause is never cleared by a payment', async () => {
    const k = await customerWithKey('operator-pause');
    await admin.pause(k.id, 'operator');
    await send(stripeEvent('customer.subscription.updated', subscription(k.customer, 'past_due')));
    expect(await reasonsOf(k.id)).toEqual(['operator', 'unpaid_renewal']);
    await send(stripeEvent('invoice.paid', invoice(k.customer)));
    await send(stripeEvent('customer.subscription.updated', subscription(k.customer, 'active')));
    expect(await reasonsOf(k.id)).toEqual(['operator']);
  });

  it('a cancelled subscription changes nothing by default (billing.stripe.on_cancel: none)', async () => {
    const k = await customerWithKey('cancelled');
    expect((await send(stripeEvent('customer.subscription.deleted', subscription(k.customer, 'canceled')))).status).toBe(200);
    expect((await admin.show(k.id)).status).toBe('active');
  });
});

describe('Redis away', () => {
  it('answers 503 and the event applies once Stripe retries', async () => {
    const k = await customerWithKey('redis-away');
    const event = stripeEvent('customer.subscription.updated', subscription(k.customer, 'past_due'));
    await stack.redisServer.kill();
    try {
      const answer = await send(event);
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({ error: 'service_unavailable' });
    } finally {
      await stack.redisServer.restart();
    }
    await eventually('the retry applied', async () => (await send(event)).status === 200, { timeoutMs: 15_000, intervalMs: 500 });
    expect(await reasonsOf(k.id)).toEqual(['unpaid_renewal']);
  });
});
