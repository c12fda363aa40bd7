/**
 * What `npm start` (scripts/start-all.ts) and the billing demo (scripts/billing-demo.ts) share: the
 * providers' listener's port, a Stripe endpoint secret for this machine only, and the port where
 * the demo itself stands in for Stripe's API while it sends a dispute (to answer the charge).
 */
export const DEMO_HOOKS_PORT = '8084';
export const DEMO_STRIPE_API_PORT = '8085';
/** Not a secret: published here, good for signing the demo's events on this machine only. */
export const DEMO_STRIPE_WEBHOOK_SECRET = 'whsec_demo_only_not_a_secret_0000000000000000';
export const DEMO_STRIPE_API_KEY = 'sk_test_demo_only';
/** The demo account's (config/demo-keys.yaml, `demo-holder`) customer at Stripe. */
export const DEMO_CUSTOMER = 'cus_demo_holder';

/** The gateway's Stripe variables for `npm start` with the Redis key store (the keys file is read-only). */
export const demoStripeEnv = (): Record<string, string> => ({
  HOOKS_PORT: DEMO_HOOKS_PORT,
  STRIPE_WEBHOOK_SECRET: DEMO_STRIPE_WEBHOOK_SECRET,
  STRIPE_API_KEY: DEMO_STRIPE_API_KEY,
  STRIPE_API_URL: `http://127.0.0.1:${DEMO_STRIPE_API_PORT}`,
});
