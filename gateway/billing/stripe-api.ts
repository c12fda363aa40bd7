import Stripe from 'stripe';
import type { StripeEnv } from '../config/hooks-env';
import { ApiError } from '../errors';

/** The customer of a charge, read from Stripe's API: a customer id, or why there is none. */
export type ChargeCustomer = { readonly customer: string } | { readonly none: string };

export interface StripeApi {
  chargeCustomer(chargeId: string): Promise<ChargeCustomer>;
}

const API_TIMEOUT_MS = 5_000;

/**
 * Stripe's API through the official SDK, pointed at `STRIPE_API_URL` (tests point it at a local
 * server). Undefined without `STRIPE_API_KEY`. Stripe away or failing: 503 (Stripe retries the
 * event); a charge it does not know: `none`.
 */
export function stripeApi(env: StripeEnv): StripeApi | undefined {
  if (!env.apiKey) return undefined;
  const url = new URL(env.apiUrl);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  const client = new Stripe(env.apiKey, {
    host: url.hostname,
    port: url.port || (protocol === 'http' ? 80 : 443),
    protocol,
    maxNetworkRetries: 0,
    timeout: API_TIMEOUT_MS,
    telemetry: false,
  });
  return {
    async chargeCustomer(chargeId) {
      try {
        const charge = await client.charges.retrieve(chargeId);
        const customer = typeof charge.customer === 'string' ? charge.customer : charge.customer?.id;
        return customer ? { customer } : { none: 'the charge has no customer' };
      } catch (err) {
        if (err instanceof Stripe.errors.StripeInvalidRequestError && err.statusCode === 404) return { none: 'Stripe does not know the charge' };
        throw new ApiError('service_unavailable', {}, 5, 'Stripe\'s API could not be reached to read the dispute\'s charge; retry later.').because('stripe_api_unavailable');
      }
    },
  };
}
