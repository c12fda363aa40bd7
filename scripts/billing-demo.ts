import http from 'node:http';
import Stripe from 'stripe';
import { DEMO_CUSTOMER, DEMO_HOOKS_PORT, DEMO_STRIPE_API_PORT, DEMO_STRIPE_WEBHOOK_SECRET } from './billing-demo-env';

/**
 * `npm run demo:billing -- STEP`: sends one Stripe event, signed as Stripe signs (the `stripe`
 * package's test-header helper), to a running gateway's providers' listener, for the demo account's
 * customer. Steps:
 *   past_due  the renewal failed: invoice.payment_failed (its link), then customer.subscription.updated past_due
 *   paid      the invoice was paid (invoice.paid)
 *   dispute   the customer disputed a charge (charge.dispute.created)
 *   won       the dispute was won (charge.dispute.closed, status won)
 *   lost      the dispute was lost (charge.dispute.closed, status lost)
 * A dispute names only its charge: while it is sent, this command answers the gateway's question
 * to "Stripe's API" (which customer the charge is) on STRIPE_API_URL's port.
 * Variables: DEMO_HOOKS_URL (default http://127.0.0.1:8084), STRIPE_WEBHOOK_SECRET (default the
 * demo's), DEMO_CUSTOMER (default cus_demo_holder), DEMO_STRIPE_API_PORT (default 8085).
 */
const STEPS = ['past_due', 'paid', 'dispute', 'won', 'lost'] as const;
type Step = (typeof STEPS)[number];

const hooksUrl = process.env.DEMO_HOOKS_URL ?? `http://127.0.0.1:${DEMO_HOOKS_PORT}`;
const secret = (process.env.STRIPE_WEBHOOK_SECRET ?? DEMO_STRIPE_WEBHOOK_SECRET).split(',')[0]!.trim();
const customer = process.env.DEMO_CUSTOMER ?? DEMO_CUSTOMER;
const apiPort = Number(process.env.DEMO_STRIPE_API_PORT ?? DEMO_STRIPE_API_PORT);
const CHARGE = `ch_demo_${customer}`;
const DISPUTE = `dp_demo_${customer}`;

const INVOICE = `in_demo_${customer}`;

function eventsOf(step: Step): Array<[string, Record<string, unknown>]> {
  switch (step) {
    case 'past_due':
      return [
        ['invoice.payment_failed', { id: INVOICE, object: 'invoice', customer, billing_reason: 'subscription_cycle', status: 'open', hosted_invoice_url: `https://invoice.stripe.com/i/demo/${INVOICE}` }],
        ['customer.subscription.updated', { id: `sub_demo_${customer}`, object: 'subscription', customer, status: 'past_due', items: { object: 'list', data: [] } }],
      ];
    case 'paid':
      return [['invoice.paid', { id: INVOICE, object: 'invoice', customer, billing_reason: 'subscription_cycle', status: 'paid' }]];
    case 'dispute':
      return [['charge.dispute.created', { id: DISPUTE, object: 'dispute', charge: CHARGE, status: 'needs_response' }]];
    case 'won':
    case 'lost':
      return [['charge.dispute.closed', { id: DISPUTE, object: 'dispute', charge: CHARGE, status: step }]];
  }
}

/** Sends one event, signed; prints the gateway's answer. */
async function sendEvent(type: string, object: Record<string, unknown>): Promise<boolean> {
  const event = { id: `evt_demo_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`, object: 'event', type, created: Math.floor(Date.now() / 1000), api_version: '2025-10-29.clover', livemode: false, data: { object } };
  const payload = JSON.stringify(event);
  const res = await fetch(`${hooksUrl}/hooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret }) },
    body: payload,
  });
  process.stdout.write(`${type} (${event.id}) for ${customer}: ${res.status} ${await res.text()}\n`);
  return res.ok;
}

/** Stands in for Stripe's API while a dispute is sent: the demo charge is the demo customer's. */
function chargeServer(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const known = req.url?.startsWith(`/v1/charges/${CHARGE}`);
    res.writeHead(known ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(known ? { id: CHARGE, object: 'charge', customer } : { error: { type: 'invalid_request_error', message: 'No such charge' } }));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(apiPort, '127.0.0.1', () => resolve(server));
  });
}

async function main(): Promise<void> {
  const step = process.argv[2] as Step;
  if (!STEPS.includes(step)) {
    process.stderr.write(`usage: npm run demo:billing -- ${STEPS.join('|')}\n`);
    process.exit(2);
  }
  const events = eventsOf(step);
  const server = events[0]![0].startsWith('charge.dispute.') ? await chargeServer() : undefined;
  try {
    for (const [type, object] of events) if (!(await sendEvent(type, object))) process.exitCode = 1;
  } finally {
    server?.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`demo:billing: ${(err as Error).message} (is the gateway running with its providers' listener at ${hooksUrl}? See docs/payments-stripe.md)\n`);
  process.exit(1);
});
