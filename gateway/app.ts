import type { RequestListener } from 'node:http';
import type express from 'express';
import type { Logger } from 'pino';
import { systemClock, type Clock } from './clock';
import type { CursorCodec } from './cursor/cursor-codec';
import { ApiError } from './errors';
import type { KeyStore } from './keys/key-record';
import type { Counters } from './limits/counters';
import { createBeginRequest } from './observe';
import type { Metrics } from './ops/metrics';
import { referenceContexts, Route, type RequestContext, type RequestTracer } from './pipeline';
import { authenticate, presentsKnownKey } from './policies/authenticate';
import { bindAddress } from './policies/bind-address';
import { checkEntitlement } from './policies/check-entitlement';
import { checkKeyState } from './policies/check-key-state';
import { enforceLimits } from './policies/enforce-limits';
import { openCursor } from './policies/open-cursor';
import { refuseKeyInPath } from './policies/refuse-key-in-path';
import type { RefusedAuthBudget } from './limits/refused-auth-table';
import { withinRefusedAuthBudget } from './policies/refused-auth-budget';
import { requireTierAtLeast } from './policies/require-tier';
import { validateItemQuery, validateListQuery, validateNoQuery } from './policies/validate-query';
import { codecFailureSink, reportCodecFailuresTo } from './compression/codec-failures';
import { createExpressApp } from './http/express-app';
import { createReferenceRouter } from './reference/reference-router';
import { matchRoute, type RouteMatch } from './router';
import { createErrorHandler } from './routes/error-handler';
import { insights } from './routes/insights';
import { ping } from './routes/ping';
import { getProperty, listProperties } from './routes/properties';
import { sendError } from './send';
import type { InsightsUpstream } from './upstream/insights-client';
import type { ListingStores } from './upstream/listing-stores';
import type { UsageRecorder } from './usage/usage-recorder';
import type { QuotaWatcher } from './webhooks/quota-thresholds';

export interface AppDeps {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly keyStore: KeyStore;
  readonly counters: Counters;
  readonly cursors: CursorCodec;
  readonly stores: ListingStores;
  readonly insights: InsightsUpstream;
  /** The unauthenticated budget per address; absent: none. */
  readonly refusedAuth?: RefusedAuthBudget;
  /** CIDRs of trusted reverse proxies; empty: `X-Forwarded-For` is ignored. */
  readonly trustedProxies: readonly string[];
  /** Usage history: told of every answer to an identified key (in memory; flushed apart from requests). */
  readonly usage?: UsageRecorder;
  /** Quota notifications: sees each limit decision (no I/O unless a threshold is crossed). */
  readonly quotaWatcher?: QuotaWatcher;
  /** Traces (gateway/tracing/), when on. */
  readonly tracer?: RequestTracer;
  /** What "now" is on the request's way (limit windows, key expiry); default: the system clock. */
  readonly clock?: Clock;
}

/** A request body is read and dropped up to this size; a larger one closes the connection. */
const MAX_IGNORED_BODY_BYTES = 64 * 1024;

/** The reference material (/v1/openapi.json, /docs): public, rarely asked for, served by express. */
function createReferenceApp(): RequestListener {
  const app = createExpressApp();
  app.use(createReferenceRouter());
  app.use((_req, res) => sendError(res, new ApiError('not_found')));
  // Express's own error page (HTML, with a stack) must never answer: the catalogue does.
  app.use(((err, _req, res, _next) => {
    sendError(res, new ApiError(err instanceof URIError ? 'not_found' : 'internal_error'));
  }) as express.ErrorRequestHandler);
  return app;
}

/**
 * The gateway's request listener: the request's way through the gateway, top to bottom. It never
 * listens: `main.ts` does, with its own dependencies. The public path is composed by hand on
 * node:http rather than with express: express 5's routing measured ~185 µs of CPU per request on
 * this machine, nearly the whole budget of the gateway (see bench/ and the performance issue).
 */
export function createGateway(deps: AppDeps): RequestListener {
  const usage = deps.usage;
  const beginRequest = createBeginRequest(deps.logger, deps.metrics, deps.trustedProxies, usage && ((keyId, status, code) => usage.record(keyId, status, code)), deps.tracer);
  const answerError = createErrorHandler(deps.logger, deps.counters);
  reportCodecFailuresTo(codecFailureSink(deps.metrics.tally.compressionFailures, deps.logger));
  // Here, at start-up: the reference's fixed bodies get their compressed forms now (StaticVariants).
  const reference = createReferenceApp();

  // The contract's order after the path and method: 401, 403 ip_not_allowed, 403 key_paused,
  // (403 upgrade_required), 429, 400 invalid_parameter, 403 country_not_entitled, 400 invalid_cursor,
  // then the data service.
  // A key pasted into the path is refused right after the key is known, before anything is forwarded.
  // An address over its budget of refused authentications gets 429 before any key look-up, unless
  // its key is one this process already holds as valid.
  const clock = deps.clock ?? systemClock;
  const authenticateKey = deps.refusedAuth
    ? withinRefusedAuthBudget(deps.refusedAuth, authenticate(deps.keyStore, clock), presentsKnownKey(deps.keyStore, clock), () => deps.metrics.tally.limitRefusals.add('address'))
    : authenticate(deps.keyStore, clock);
  // Each route's steps are typed (pipeline.ts, Route): a step that reads the key, a checked query
  // or the cursor's filters only compiles after the step that sets it.
  const identify = <Start extends object>(start: Route<Start>) => start.then(authenticateKey).then(refuseKeyInPath()).then(bindAddress()).then(checkKeyState());
  const watcher = deps.quotaWatcher;
  const limits = enforceLimits(deps.counters, deps.metrics, watcher && ((keyId, decision) => watcher.observe(keyId, decision)), clock);
  const routes = {
    ping: identify(Route.start()).then(limits).then(validateNoQuery()).then(ping()),
    properties: identify(Route.start()).then(limits).then(validateListQuery()).then(checkEntitlement('listQuery')).then(openCursor(deps.cursors))
      .then(listProperties(deps.stores, deps.cursors)),
    property: identify(Route.start<{ readonly params: { readonly id: string } }>()).then(limits).then(validateItemQuery()).then(checkEntitlement('itemQuery'))
      .then(getProperty(deps.stores)),
    insights: identify(Route.start<{ readonly params: { readonly subPath: string } }>()).then(requireTierAtLeast('advanced')).then(limits).then(insights(deps.insights)),
  };
  /** The route's steps, on the request with the route's own parameters (the router typed them). */
  const run = (match: Exclude<RouteMatch, { kind: 'not_found' } | { route: 'reference' }>, ctx: RequestContext): Promise<void> => {
    switch (match.route) {
      case 'property': return routes.property.run(Object.assign(ctx, { params: match.params }));
      case 'insights': return routes.insights.run(Object.assign(ctx, { params: match.params }));
      default: return routes[match.route].run(ctx);
    }
  };

  function route(ctx: RequestContext): void {
    const { req, res } = ctx;
    try {
      // Path before method, method before key (README, "The surface"): 404, then 405 with `Allow: GET`
      // for any other method (HEAD included).
      const match = matchRoute(ctx.path);
      if (match.kind === 'not_found') throw new ApiError('not_found').because('unknown_path');
      ctx.route = match.route;
      ctx.params = match.params;
      if (req.method !== 'GET') throw new ApiError('method_not_allowed');
      if (match.route === 'reference') {
        referenceContexts.set(req, ctx);
        return reference(req, res);
      }
      run(match, ctx).catch((err: unknown) => answerError(err, ctx));
    } catch (err) {
      answerError(err, ctx);
    }
  }

  return function handleRequest(req, res) {
    const ctx = beginRequest(req, res);
    // No endpoint takes a body. When one is sent anyway it is read to its end before any answer, so
    // a malformed one (bad chunk, smuggled request) is refused by the HTTP parser (server.ts) and
    // never answered as if it were fine; one over the cap closes the connection.
    if (req.headers['transfer-encoding'] === undefined && (req.headers['content-length'] ?? '0') === '0') return route(ctx);
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_IGNORED_BODY_BYTES) req.socket.destroy();
    });
    req.once('end', () => route(ctx));
  };
}
