// gateway/admin/: the admin API's express app (/admin/keys, usage, audit, webhooks, holders' routes mounted)
// and its OpenAPI document at /admin/openapi.json.
import express, { type Express, type Router } from 'express';
import type { Logger } from 'pino';
import { ApiError } from '../errors';
import type { KeyAdmin } from '../keys/key-admin';
import type { OperatorRegistry } from '../operators/operator-tokens';
import { runAs } from '../audit/actor';
import { parseAuditQuery } from '../audit/audit-query';
import { createGuessBudget, type GuessBudget } from '../operators/guess-budget';
import { bearerOperator, operatorOf, permit } from '../operators/require-role';
import { allows } from '../operators/roles';
import { sendError, sendJson, sendJsonText } from '../send';
import { loadAdminDocument } from './admin-document';
import { admitAdminWork } from '../http/admin-admission';
import { createExpressApp } from '../http/express-app';
import { checkHost } from '../http/host-check';
import { invalidParameter } from '../http/invalid-parameter';
import { listQuery } from '../http/list-query';
import { operatorError } from '../http/operator-error';
import { jsonBody } from '../http/request-bodies';

/**
 * The admin API (docs/keys-and-accounts.md): key management over HTTP for billing systems and operators.
 * JSON in and out; errors in the public `{error, message}` form. It never shows a hash or a key
 * value, except the new value in the answer to create and roll. Every call needs an operator token;
 * its role decides which calls it may make (gateway/operators/roles.ts), else 403 `forbidden`.
 */
/**
 * Paths other capabilities add to the admin API (usage history, webhooks), with their methods for
 * 405s. They run after the token check, so any operator reaches them; a route that changes
 * something must check its role itself with `permit` (gateway/operators/require-role.ts).
 */
export interface AdminExtensions {
  readonly routers?: readonly Router[];
  readonly methods?: Readonly<Record<string, string>>;
  /** The operator console, mounted at /console before the bearer check (it signs in with a session). */
  readonly console?: Router;
  /** Host names answered besides loopback and the listener's own address (ADMIN_HOST, ADMIN_ALLOWED_HOSTS). */
  readonly allowedHosts?: readonly string[];
  /** Failed bearer tokens per address (default: 10 a minute, gateway/operators/guess-budget.ts). */
  readonly guesses?: GuessBudget;
}

/**
 * Pausing and settling, of one key and of every key of an account (a billing system's calls): a
 * pause names its reason (and perhaps the open invoice's link), a settle perhaps its reason.
 */
function addPauseRoutes(app: Express, admin: KeyAdmin, body: (req: express.Request) => Record<string, unknown>): void {
  const id = (req: express.Request): string => req.params.id as string;
  app.post('/admin/keys/:id/pause', permit('manage'), async (req, res) => {
    const { reason, ...details } = body(req);
    sendJson(res, 200, await admin.pause(id(req), reason, undefined, details));
  });
  app.post('/admin/keys/:id/settle', permit('manage'), async (req, res) => sendJson(res, 200, await admin.settle(id(req), body(req).reason)));
  app.post('/admin/accounts/:id/pause', permit('manage'), async (req, res) => {
    const { reason, ...details } = body(req);
    sendJson(res, 200, await admin.pauseAccount(id(req), reason ?? null, undefined, details));
  });
  app.post('/admin/accounts/:id/settle', permit('manage'), async (req, res) => sendJson(res, 200, await admin.settleAccount(id(req), body(req).reason)));
}

export function createAdminApp(admin: KeyAdmin, operators: OperatorRegistry, logger: Logger, extensions: AdminExtensions = {}): Express {
  const app = createExpressApp();
  // First: a page reached under a foreign host name (DNS rebinding) is never answered.
  app.use(checkHost(extensions.allowedHosts ?? []));
  // Admin work never crowds /v1 out: one admin request worked on at a time, a bounded queue behind it.
  app.use(admitAdminWork());

  // The document describing this API is public (it holds no data): tools fetch it without a token.
  const documentText = JSON.stringify(loadAdminDocument());
  app.get('/admin/openapi.json', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    sendJsonText(res, 200, documentText);
  });
  app.all('/admin/openapi.json', (_req, res) => sendError(res, new ApiError('method_not_allowed', {}, undefined, 'This method is not allowed on this path.'), 'GET'));
  // The console signs in with a session cookie, not a bearer token: it is mounted before the check.
  if (extensions.console) app.use('/console', extensions.console);
  app.use(bearerOperator(operators, logger, extensions.guesses ?? createGuessBudget()));
  // Every change this request makes is recorded as this operator's, through the admin API.
  app.use((_req, res, next) => runAs({ name: operatorOf(res).name, channel: 'admin_api' }, next));
  // Compressed bodies are refused (415 from the parser, answered 400 as the message says).
  app.use(jsonBody('64kb'));
  // No body is an empty object; any other JSON than an object (an array, a number...) is refused.
  const body = (req: express.Request): Record<string, unknown> => {
    if (req.body === undefined) return {};
    if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) throw invalidParameter('body', 'must be a JSON object');
    return req.body as Record<string, unknown>;
  };
  const id = (req: express.Request): string => req.params.id as string;

  app.post('/admin/keys', permit('issue'), async (req, res) => sendJson(res, 201, await admin.create(body(req))));
  app.get('/admin/keys', permit('read'), async (req, res) => sendJson(res, 200, await admin.list(listQuery(req.url))));
  app.get('/admin/keys/:id', permit('read'), async (req, res) => sendJson(res, 200, await admin.show(id(req))));
  app.get('/admin/keys/:id/usage', permit('read'), async (req, res) => sendJson(res, 200, await admin.usage(id(req))));
  // What a change does decides the role it needs (gateway/keys/change-role.ts): ending, reviving,
  // putting into an account or opening to every address is the issuing role's.
  app.patch('/admin/keys/:id', permit('manage'), async (req, res) =>
    sendJson(res, 200, await admin.set(id(req), body(req), { issue: allows(operatorOf(res).role, 'issue') })));
  // Deleting a revoked record (docs/guarantees.md) is as final as revoking: the same role.
  app.delete('/admin/keys/:id', permit('issue'), async (req, res) => {
    await admin.delete(id(req));
    res.statusCode = 204;
    res.end();
  });
  addPauseRoutes(app, admin, body);
  app.post('/admin/keys/:id/revoke', permit('issue'), async (req, res) => sendJson(res, 200, await admin.revoke(id(req))));
  app.post('/admin/keys/:id/roll', permit('issue'), async (req, res) => sendJson(res, 201, await admin.roll(id(req), body(req).grace_seconds)));
  app.get('/admin/audit', permit('read'), async (req, res) => {
    const query = parseAuditQuery(new URL(req.originalUrl, 'http://admin').searchParams);
    sendJson(res, 200, await admin.readAudit(query));
  });
  for (const router of extensions.routers ?? []) app.use(permit('read'), router);

  // Any other method on a known path: 405 naming the methods that path takes.
  const methodsByPath: Record<string, string> = {
    '/admin/keys': 'GET, POST',
    '/admin/keys/:id': 'GET, PATCH, DELETE',
    '/admin/keys/:id/usage': 'GET',
    '/admin/audit': 'GET',
    ...Object.fromEntries(['pause', 'settle', 'revoke', 'roll'].map((a) => [`/admin/keys/:id/${a}`, 'POST'])),
    '/admin/accounts/:id/pause': 'POST',
    '/admin/accounts/:id/settle': 'POST',
    ...extensions.methods,
  };
  for (const [path, allow] of Object.entries(methodsByPath)) {
    app.all(path, (_req, res) => sendError(res, new ApiError('method_not_allowed', {}, undefined, 'This method is not allowed on this path.'), allow));
  }
  app.use(() => {
    throw new ApiError('not_found');
  });
  app.use(function answerAdminError(err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) {
    sendError(res, operatorError(err, logger, { bodyMessage: 'The body must be a JSON object of at most 64 KB, UTF-8, not compressed.', failed: 'admin request failed' }));
  } as express.ErrorRequestHandler);
  return app;
}
