import express, { type Express } from 'express';
import type { Logger } from 'pino';
import type { CursorCodec } from './cursor/cursor-codec';
import type { KeyStore } from './keys/key-record';
import type { Counters } from './limits/counters';
import { observeRequests } from './observe';
import type { Metrics } from './ops/metrics';
import { authenticate } from './policies/authenticate';
import { bindAddress } from './policies/bind-address';
import { checkEntitlement } from './policies/check-entitlement';
import { checkKeyState } from './policies/check-key-state';
import { enforceLimits } from './policies/enforce-limits';
import { openCursor } from './policies/open-cursor';
import { requireTier } from './policies/require-tier';
import { validateItemQuery, validateListQuery, validateNoQuery } from './policies/validate-query';
import { createReferenceRouter, REFERENCE_PATHS } from './reference/reference-router';
import { handleErrors, notFound, onlyGet, requireListingId } from './routes/fallbacks';
import { insights } from './routes/insights';
import { ping } from './routes/ping';
import { getProperty, listProperties } from './routes/properties';
import type { InsightsUpstream } from './upstream/insights-client';
import type { ListingStores } from './upstream/listing-stores';
import './request-context';

export interface AppDeps {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly keyStore: KeyStore;
  readonly counters: Counters;
  readonly cursors: CursorCodec;
  readonly stores: ListingStores;
  readonly insights: InsightsUpstream;
  /** CIDRs of trusted reverse proxies; empty: `X-Forwarded-For` is ignored. */
  readonly trustedProxies: readonly string[];
}

const KEYED_PATHS = ['/v1/ping', '/v1/properties', '/v1/properties/:id', '/v1/insights', '/v1/insights/*rest'];

/** Builds the gateway. Never listens: `main.ts` does, tests build it with their own dependencies. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  // `/V1/ping` and `/v1/ping/` are not the surface: exact paths only.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  // The raw query is parsed by the validators: repeated or array-like parameters must be refused, not merged.
  app.set('query parser', false);
  // X-Forwarded-For counts only from configured proxies (right-most untrusted address); never blanket trust.
  app.set('trust proxy', deps.trustedProxies.length ? [...deps.trustedProxies] : false);

  // 1. Every answer, even a 404, gets a request id, one log line (never a header, so never a key) and metrics.
  app.use(observeRequests(deps.logger, deps.metrics));

  // 2. Path before method, method before key (CONTRACT part 2): 404 for an id outside the alphabet,
  //    then 405 with `Allow: GET` for any other method on a known path.
  app.all('/v1/properties/:id', requireListingId());
  app.all([...KEYED_PATHS, ...REFERENCE_PATHS], onlyGet());

  // 3. Reference material: public, no key.
  app.use(createReferenceRouter());

  // 4. Keyed endpoints. Order is the contract's: 401, 403 ip, 403 paused, 403 upgrade, 429,
  //    400 invalid_parameter, 403 country_not_entitled, 400 invalid_cursor, then the data service.
  const identify = [authenticate(deps.keyStore), bindAddress(), checkKeyState()];
  const limits = enforceLimits(deps.counters, deps.metrics);
  app.get('/v1/ping', ...identify, limits, validateNoQuery(), ping());
  app.get(
    '/v1/properties',
    ...identify,
    limits,
    validateListQuery(),
    checkEntitlement(),
    openCursor(deps.cursors),
    listProperties(deps.stores, deps.cursors),
  );
  app.get('/v1/properties/:id', ...identify, limits, validateItemQuery(), checkEntitlement(), getProperty(deps.stores));
  app.get(['/v1/insights', '/v1/insights/*rest'], ...identify, requireTier('advanced'), limits, insights(deps.insights));

  // 5. Anything else is not part of the surface; every error is answered from the catalogue.
  app.use(notFound());
  app.use(handleErrors(deps.logger, deps.counters));
  return app;
}
