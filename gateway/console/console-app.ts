import fs from 'node:fs';
import path from 'node:path';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { runAs } from '../audit/actor';
import { parseAuditQuery } from '../audit/audit-query';
import { invalidParameter } from '../http/invalid-parameter';
import { operatorError } from '../http/operator-error';
import { ApiError } from '../errors';
import type { KeyAdmin } from '../keys/key-admin';
import { monthParam } from '../usage/usage-query';
import { tokenDigest, type OperatorRegistry } from '../operators/operator-tokens';
import { allows, type Permission, type Role } from '../operators/roles';
import { findRepoRoot } from '../reference/reference-router';
import type { ConsoleStore } from './console-store';
import { auditPage } from './pages/audit-page';
import { confirmPage, type ConfirmAction } from './pages/confirm-page';
import { errorPage } from './pages/error-page';
import { keyPage } from './pages/key-page';
import { keyValuePage } from './pages/key-value-page';
import { KEYS_PER_PAGE, keysListPage, type KeysFilter } from './pages/keys-list';
import type { PageContext } from './pages/layout';
import { newKeyPage } from './pages/new-key-page';
import { reportPage } from './pages/report-page';
import { signInPage } from './pages/sign-in';
import { csrfMatches, type Session, type SessionStore } from './sessions';

/**
 * The console's Content-Security-Policy: scripts, styles and everything else only from this
 * listener, no inline script or style, forms post only here, never framed.
 */
export const CONSOLE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
export const SESSION_COOKIE = 'lgw_console';

export interface ConsoleOptions {
  store: ConsoleStore;
  operators: OperatorRegistry;
  sessions: SessionStore;
  sessionTtlMs: number;
  logger: Logger;
}

interface Signed {
  session: Session;
  name: string;
  role: Role;
  ctx: PageContext;
}

const ASSETS: Record<string, string> = { 'console.css': 'text/css; charset=utf-8', 'console.js': 'text/javascript; charset=utf-8' };

/** The asset files, read once: from the repository (they are not compiled). */
function loadAssets(): Map<string, Buffer> {
  const dir = path.join(findRepoRoot(__dirname), 'gateway', 'console', 'assets');
  return new Map(Object.keys(ASSETS).map((name) => [name, fs.readFileSync(path.join(dir, name))]));
}

function sendPage(res: Response, status: number, page: string): void {
  res.status(status).type('text/html; charset=utf-8').send(page);
}

/** A form field as one string ('' when absent; a repeated field is refused). */
function field(req: Request, name: string): string {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const v = body[name];
  if (v === undefined) return '';
  if (typeof v !== 'string') throw invalidParameter(name, 'given more than once');
  return v.trim();
}

function wholeNumber(name: string, value: string): number | undefined {
  if (value === '') return undefined;
  if (!/^\d{1,15}$/.test(value)) throw invalidParameter(name, 'must be a whole number');
  return Number(value);
}

/** The record fields of the create and change forms, as the key admin's input. */
function recordInput(req: Request): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const tier = field(req, 'tier');
  if (tier) out.tier = tier;
  // One field for the key's addresses: one entry, or several separated by commas or spaces.
  const address = field(req, 'address');
  if (address) {
    const entries = address.split(/[\s,]+/).filter(Boolean);
    if (entries.length === 1) out.address = entries[0];
    else out.addresses = entries;
  }
  const countries = field(req, 'countries');
  if (countries) out.countries = countries.split(/[\s,]+/).filter(Boolean);
  for (const name of ['per_minute', 'per_day', 'per_month'] as const) {
    const n = wholeNumber(name, field(req, name));
    if (n !== undefined) out[name] = n;
  }
  return out;
}

const queryOf = (req: Request): URLSearchParams => new URL(req.originalUrl, 'http://console').searchParams;

/**
 * The operator console (`/console` on the admin listener): server-rendered pages over the same key
 * admin as the admin API, so roles, validation and the audit log are the same. Sign-in with an
 * operator token makes a session (cookie: HttpOnly, SameSite=Strict, Path=/console, expiring);
 * every form carries the session's CSRF token; every change runs as the operator, channel `console`.
 */
export function createConsoleRouter(o: ConsoleOptions): Router {
  const router = express.Router({ caseSensitive: true });
  const assets = loadAssets();
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 });
  const signed = (res: Response): Signed => res.locals.console as Signed;
  const admin = (): KeyAdmin => {
    if (!o.store.admin) throw new ApiError('forbidden', {}, undefined, `This console is read-only: keys come from ${o.store.source}.`);
    return o.store.admin;
  };

  router.use((_req, res, next) => {
    res.set({
      'Content-Security-Policy': CONSOLE_CSP,
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      // same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on form posts.
      'Referrer-Policy': 'same-origin',
      'Cache-Control': 'no-store',
    });
    next();
  });

  router.get('/assets/:name', (req, res) => {
    const name = req.params.name as string;
    const body = assets.get(name);
    if (!body) throw new ApiError('not_found');
    res.set('Cache-Control', 'private, max-age=300').type(ASSETS[name]!).send(body);
  });

  /** A POST from another origin is refused whatever it carries (SameSite=Strict and CSRF tokens are the main guard). */
  const sameOrigin = (req: Request, _res: Response, next: NextFunction): void => {
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${req.headers.host}` && origin !== `https://${req.headers.host}`) {
      throw new ApiError('forbidden', {}, undefined, 'The form was not sent from this console.');
    }
    next();
  };

  router.get('/sign-in', (_req, res) => sendPage(res, 200, signInPage()));
  router.post('/sign-in', sameOrigin, form, (req, res) => {
    const token = field(req, 'token');
    const operator = o.operators.authenticate(token);
    if (!operator) {
      o.logger.warn({ channel: 'console' }, 'console sign-in refused: unknown token');
      return sendPage(res, 401, signInPage('That token is not recognised.'));
    }
    const session = o.sessions.create(operator.name, tokenDigest(token));
    res.setHeader('Set-Cookie', serializeCookie(SESSION_COOKIE, session.id, {
      httpOnly: true, sameSite: 'strict', path: '/console', maxAge: Math.floor(o.sessionTtlMs / 1000),
    }));
    o.logger.info({ operator: operator.name, role: operator.role }, 'console sign-in');
    res.redirect(303, '/console/keys');
  });

  // Everything below needs a live session whose token is still in the operator set, unchanged.
  router.use((req, res, next) => {
    const id = parseCookies(req.headers.cookie ?? '')[SESSION_COOKIE];
    const session = id ? o.sessions.get(id) : undefined;
    const entry = session ? o.operators.entry(session.operatorName) : undefined;
    if (!session || !entry || !entry.digest.equals(session.tokenDigest)) {
      if (session) o.sessions.end(session.id);
      if (id) res.setHeader('Set-Cookie', serializeCookie(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'strict', path: '/console', maxAge: 0 }));
      if (req.method === 'GET') return res.redirect(303, '/console/sign-in');
      throw new ApiError('unauthenticated', {}, undefined, 'Sign in first: there is no session, or it has ended.');
    }
    const ctx: PageContext = { operator: { name: entry.name, role: entry.role }, csrf: session.csrf };
    res.locals.console = { session, name: entry.name, role: entry.role, ctx } satisfies Signed;
    // Every change made while answering is recorded as this operator's, through the console.
    runAs({ name: entry.name, channel: 'console' }, next);
  });
  router.post('/{*rest}', sameOrigin, form, (req, res, next) => {
    if (!csrfMatches(signed(res).session, (req.body as Record<string, unknown> | undefined)?._csrf)) {
      throw new ApiError('forbidden', {}, undefined, 'The form is not from this session (missing or wrong CSRF token); reload the page and try again.');
    }
    next();
  });
  const need = (permission: Permission) => (_req: Request, res: Response, next: NextFunction): void => {
    const { role, name } = signed(res);
    if (!allows(role, permission)) throw new ApiError('forbidden', {}, undefined, `The role "${role}" of token "${name}" cannot do this.`);
    next();
  };

  router.post('/sign-out', (_req, res) => {
    o.sessions.end(signed(res).session.id);
    res.setHeader('Set-Cookie', serializeCookie(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'strict', path: '/console', maxAge: 0 }));
    res.redirect(303, '/console/sign-in');
  });

  router.get('/', (_req, res) => res.redirect(303, '/console/keys'));

  router.get('/keys', need('read'), async (req, res) => {
    const q = queryOf(req);
    const page = Number(q.get('page') ?? '1');
    const filter: KeysFilter = {
      q: q.get('q')?.trim() ?? '',
      state: q.get('state') ?? '',
      tier: q.get('tier') ?? '',
      country: (q.get('country') ?? '').trim().toUpperCase(),
      page: Number.isInteger(page) && page > 0 ? page : 1,
    };
    const all = (await o.store.list()).filter((k) =>
      (!filter.q || k.id.toLowerCase().includes(filter.q.toLowerCase()))
      && (!filter.state || k.status === filter.state)
      && (!filter.tier || k.tier === filter.tier)
      && (!filter.country || k.countries.includes(filter.country)));
    const shown = all.slice((filter.page - 1) * KEYS_PER_PAGE, filter.page * KEYS_PER_PAGE);
    const rows = await Promise.all(shown.map(async (key) => ({ key, usage: await o.store.usage(key.id) })));
    const s = signed(res);
    sendPage(res, 200, keysListPage(s.ctx, { rows, total: all.length, filter, source: o.store.source, canIssue: !!o.store.admin && allows(s.role, 'issue'), readOnly: !o.store.admin }));
  });

  router.get('/keys/new', need('issue'), (_req, res) => {
    admin();
    sendPage(res, 200, newKeyPage(signed(res).ctx));
  });
  router.post('/keys', need('issue'), async (req, res) => {
    const created = await admin().create({ id: field(req, 'id'), ...recordInput(req) });
    sendPage(res, 201, keyValuePage(signed(res).ctx, created.id, created.key, 'created'));
  });

  router.get('/keys/:id', need('read'), async (req, res) => {
    const id = req.params.id as string;
    const [key, usage, audit, history] = await Promise.all([
      o.store.show(id), o.store.usage(id), o.store.readAudit({ keyId: id, limit: 10 }), o.store.history?.(id, 14),
    ]);
    const done = queryOf(req).get('done') ?? undefined;
    const s = signed(res);
    sendPage(res, 200, keyPage(s.ctx, { key, usage, audit: audit.entries, ...(history ? { history } : {}), role: s.role, readOnly: !o.store.admin, source: o.store.source, ...(done ? { done } : {}) }));
  });

  const CONFIRM: Record<ConfirmAction, Permission> = { pause: 'manage', roll: 'issue', revoke: 'issue' };
  router.get('/keys/:id/confirm/:action', (req, res, next) => {
    const action = req.params.action as ConfirmAction;
    if (!Object.hasOwn(CONFIRM, action)) return next('route');
    need(CONFIRM[action])(req, res, next);
  }, async (req, res) => {
    admin();
    sendPage(res, 200, confirmPage(signed(res).ctx, await o.store.show(req.params.id as string), req.params.action as ConfirmAction));
  });

  const back = (res: Response, id: string, done: string): void => res.redirect(303, `/console/keys/${encodeURIComponent(id)}?done=${done}`);
  router.post('/keys/:id/pause', need('manage'), async (req, res) => {
    await admin().pause(req.params.id as string, field(req, 'reason'));
    back(res, req.params.id as string, 'paused');
  });
  router.post('/keys/:id/settle', need('manage'), async (req, res) => {
    await admin().settle(req.params.id as string);
    back(res, req.params.id as string, 'settled');
  });
  router.post('/keys/:id/set', need('manage'), async (req, res) => {
    await admin().set(req.params.id as string, recordInput(req));
    back(res, req.params.id as string, 'changed');
  });
  router.post('/keys/:id/revoke', need('issue'), async (req, res) => {
    await admin().revoke(req.params.id as string);
    back(res, req.params.id as string, 'revoked');
  });
  router.post('/keys/:id/roll', need('issue'), async (req, res) => {
    const grace = wholeNumber('grace_seconds', field(req, 'grace_seconds'));
    const rolled = await admin().roll(req.params.id as string, grace);
    sendPage(res, 201, keyValuePage(signed(res).ctx, rolled.id, rolled.key, 'rolled'));
  });

  router.get('/audit', need('read'), async (req, res) => {
    const params = queryOf(req);
    const filter = { key_id: params.get('key_id') ?? '', since: params.get('since') ?? '' };
    const page = await o.store.readAudit(parseAuditQuery(params));
    sendPage(res, 200, auditPage(signed(res).ctx, page, filter, `Changes to ${o.store.source}, newest first.`));
  });

  // The admin API's check of the month (this month when none is given).
  const reportMonth = (req: Request): string => monthParam(queryOf(req).get('month') ?? new Date().toISOString().slice(0, 7));
  const reports = (): Required<Pick<ConsoleStore, 'report' | 'reportCsv'>> => {
    if (!o.store.report || !o.store.reportCsv) throw new ApiError('not_found', {}, undefined, 'Usage is not recorded by this gateway.');
    return { report: o.store.report, reportCsv: o.store.reportCsv };
  };
  router.get('/reports/monthly', need('read'), async (req, res) => {
    sendPage(res, 200, reportPage(signed(res).ctx, await reports().report(reportMonth(req))));
  });
  router.get('/reports/monthly.csv', need('read'), async (req, res) => {
    const month = reportMonth(req);
    const { report, reportCsv } = reports();
    res.status(200).type('text/csv; charset=utf-8').set('Content-Disposition', `attachment; filename="usage-${month}.csv"`).send(reportCsv(await report(month)));
  });

  router.use(() => {
    throw new ApiError('not_found');
  });
  router.use(function consoleError(err: unknown, _req: Request, res: Response, _next: NextFunction) {
    const ctx = (res.locals.console as Signed | undefined)?.ctx ?? {};
    // The admin API's own mapping (Redis away: 503; a form or path that cannot be read: 4xx), as a page.
    const answer = operatorError(err, o.logger, { bodyMessage: 'The form could not be read (at most 16 KB and 50 fields, UTF-8, not compressed).', failed: 'console request failed' });
    if (answer.retryAfterSeconds !== undefined) res.set('Retry-After', String(answer.retryAfterSeconds));
    sendPage(res, answer.status, errorPage(ctx, answer.code, answer.message));
  } as express.ErrorRequestHandler);
  return router;
}
