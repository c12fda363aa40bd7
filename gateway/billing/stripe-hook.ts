// gateway/billing/: payments moving keys by themselves: Stripe's events (POST /hooks/stripe) verified, read,
// decided per account in Redis (the latest event wins), applied once to the account's keys.
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import Stripe from 'stripe';
import type { AccountStore } from '../accounts/account-store';
import type { StripeBillingConfig } from '../config/billing-config';
import type { StripeEnv } from '../config/hooks-env';
import { ApiError } from '../errors';
import type { HookAnswer, HookRoute } from '../hooks/hooks-app';
import type { KeyAdmin } from '../keys/key-admin-types';
import type { RedisClient } from '../redis/connect';
import { billingApply } from './billing-apply';
import { applyToAccount } from './billing-events';
import { redisBillingState } from './billing-state';
import { redisEventClaims } from './event-claims';
import { stripeApi } from './stripe-api';
import { readEvent, type Subject } from './stripe-events';

/** Stripe's own tolerance for a delivery's timestamp. */
const TOLERANCE_SECONDS = 300;

export interface StripeHookDeps {
  readonly env: StripeEnv;
  readonly config: () => StripeBillingConfig;
  readonly keyAdmin: KeyAdmin;
  readonly accounts: AccountStore;
  readonly redis: RedisClient;
  readonly logger: Logger;
}

interface VerifiedEvent {
  readonly id: string;
  readonly type: string;
  readonly created: number;
  readonly object: unknown;
}

const refused = (parameter: string, message: string): ApiError => new ApiError('invalid_parameter', { parameter }, undefined, message);

/** The event, once its signature verifies under one of the secrets (nothing is parsed before). */
function verify(body: Buffer, headers: IncomingHttpHeaders, secrets: readonly string[]): VerifiedEvent {
  const header = headers['stripe-signature'];
  if (typeof header !== 'string' || !header) throw refused('stripe-signature', 'The Stripe-Signature header is missing.');
  let event: Stripe.Event | undefined;
  for (const secret of secrets) {
    try {
      event = Stripe.webhooks.constructEvent(body, header, secret, TOLERANCE_SECONDS);
      break;
    } catch (err) {
      if (err instanceof SyntaxError) throw refused('body', 'The body is not JSON.');
      if (!(err instanceof Stripe.errors.StripeSignatureVerificationError)) throw err;
    }
  }
  if (!event) throw refused('stripe-signature', `The signature does not verify (wrong secret, a body changed after signing, or a timestamp more than ${TOLERANCE_SECONDS} s away).`);
  const e = event as unknown as Record<string, unknown>;
  const object = (e.data as Record<string, unknown> | undefined)?.object;
  if (typeof e.id !== 'string' || !e.id || typeof e.type !== 'string' || typeof e.created !== 'number' || !object || typeof object !== 'object') {
    throw refused('body', 'The body is not a Stripe event (id, type, created and data.object).');
  }
  return { id: e.id, type: e.type, created: e.created, object };
}

/** `POST /hooks/stripe`: on when STRIPE_WEBHOOK_SECRET is set. */
export function stripeHook(deps: StripeHookDeps): HookRoute {
  const { logger } = deps;
  const claims = redisEventClaims(deps.redis);
  const state = redisBillingState(deps.redis);
  const apply = billingApply(deps.keyAdmin, deps.accounts, logger);
  const api = stripeApi(deps.env);

  /** The customer the event is about, or why it is ignored. */
  async function customerOf(subject: Subject): Promise<{ customer: string } | { none: string }> {
    if ('customer' in subject) return subject;
    if (!api) return { none: 'dispute events need STRIPE_API_KEY (to read the charge\'s customer)' };
    return api.chargeCustomer(subject.charge);
  }

  async function applyEvent(event: VerifiedEvent): Promise<HookAnswer> {
    const fields = { event_id: event.id, type: event.type };
    const reading = readEvent(event.type, event.object, deps.config());
    if (!reading.use) {
      logger.info({ ...fields, why: reading.why }, 'stripe event ignored');
      return { status: 200, body: { received: true, ignored: reading.why } };
    }
    const subject = await customerOf(reading.subject);
    if ('none' in subject) {
      logger.info({ ...fields, why: subject.none }, 'stripe event ignored');
      return { status: 200, body: { received: true, ignored: subject.none } };
    }
    const accountIds = await deps.accounts.idsOfBillingCustomer(subject.customer);
    if (!accountIds.length) {
      logger.info({ ...fields, customer: subject.customer }, 'stripe event for a customer no account names');
      return { status: 200, body: { received: true, ignored: 'no account names this customer' } };
    }
    const origin = { actor: { name: `billing:stripe:${event.id}`, channel: 'billing' as const }, eventFields: { source: 'billing' } };
    let changed = 0;
    for (const accountId of accountIds) changed += await applyToAccount(accountId, event.created, reading.decisions, { state, apply, origin, logger });
    logger.info({ ...fields, customer: subject.customer, accounts: accountIds, key_changes: changed }, 'stripe event applied');
    return { status: 200, body: { received: true } };
  }

  return {
    path: '/hooks/stripe',
    provider: 'stripe',
    async handle(body, headers) {
      const event = verify(body, headers, deps.env.webhookSecrets);
      const claim = await claims.claim(event.id);
      if (claim.state === 'done') return { status: 200, body: { received: true, duplicate: true } };
      if (claim.state === 'busy') throw new ApiError('service_unavailable', {}, 5, 'This event is being applied by another delivery; retry later.');
      try {
        const answer = await applyEvent(event);
        await claim.done();
        return answer;
      } catch (err) {
        await claim.release().catch(() => undefined);
        throw err;
      }
    },
  };
}
