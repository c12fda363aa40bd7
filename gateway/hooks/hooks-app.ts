// gateway/hooks/: the providers' listener (HOOKS_PORT): the one port payment and code-hosting providers call,
// answering only the paths providers registered, with a bounded raw body, its own access lines.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ApiError } from '../errors';
import { logRedisFailure } from '../redis/expected-errors';
import { sendError, sendJson } from '../send';
import { readBoundedBody } from './bounded-body';

/** Bodies above this are refused (400) without reading further: providers' deliveries are far smaller. */
export const HOOK_BODY_LIMIT = 1024 * 1024;

/** A provider's answer: its status and JSON body. */
export interface HookAnswer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * What a provider registers: the path it is called at (POST only) and its handler, which gets the
 * raw body (verified by the handler before anything is parsed) and the request's headers. A thrown
 * ApiError is answered as it is; Redis away, 503; anything else 500, logged.
 */
export interface HookRoute {
  readonly path: string;
  /** Named on the access line, e.g. `stripe`. */
  readonly provider: string;
  readonly handle: (body: Buffer, headers: IncomingHttpHeaders) => Promise<HookAnswer>;
}

/** The route table: each provider adds its path once (a path added twice is a programming error). */
export class HookRoutes {
  private readonly routes = new Map<string, HookRoute>();
  add(route: HookRoute): this {
    if (this.routes.has(route.path)) throw new Error(`hooks: ${route.path} registered twice`);
    this.routes.set(route.path, route);
    return this;
  }
  get(path: string): HookRoute | undefined {
    return this.routes.get(path);
  }
  get size(): number {
    return this.routes.size;
  }
  get paths(): string[] {
    return [...this.routes.keys()].sort();
  }
}

const pathOf = (url: string | undefined): string => {
  const raw = url ?? '/';
  const q = raw.indexOf('?');
  return q === -1 ? raw : raw.slice(0, q);
};

/** Any failure as the catalogue answer it becomes (never a stack in the answer). */
function answerFor(err: unknown, logger: Logger, provider: string): ApiError {
  if (err instanceof ApiError) return err;
  if (logRedisFailure(err, logger, `${provider} hook failed`)) return new ApiError('service_unavailable', {}, 1);
  logger.error({ err, provider }, 'hook failed');
  return new ApiError('internal_error');
}

async function answer(req: IncomingMessage, res: ServerResponse, routes: HookRoutes, logger: Logger): Promise<string | undefined> {
  const route = routes.get(pathOf(req.url));
  if (!route) {
    sendError(res, new ApiError('not_found', {}, undefined, 'Not found: this listener answers only the providers\' paths.'));
    return undefined;
  }
  if (req.method !== 'POST') {
    sendError(res, new ApiError('method_not_allowed', {}, undefined, 'Only POST is allowed on this path.'), 'POST');
    return route.provider;
  }
  try {
    const body = await readBoundedBody(req, res, HOOK_BODY_LIMIT);
    const done = await route.handle(body, req.headers);
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, done.status, done.body);
  } catch (err) {
    sendError(res, answerFor(err, logger, route.provider), 'POST');
  }
  return route.provider;
}

/**
 * The providers' listener: only the registered paths (anything else 404 `not_found`), POST only
 * (405), a body of at most 1 MiB (400, read no further), and one access line per answer in the
 * public listener's shape (`req`, `res`, `responseTime`) with `listener: "hooks"` and the provider.
 * Headers (signatures) are never logged.
 */
export function createHooksListener(routes: HookRoutes, logger: Logger): RequestListener {
  return (req, res) => {
    const started = process.hrtime.bigint();
    const id = randomUUID();
    res.setHeader('X-Request-Id', id);
    void answer(req, res, routes, logger).then((provider) => {
      const line = {
        listener: 'hooks',
        ...(provider ? { provider } : {}),
        req: { id, method: req.method, url: pathOf(req.url), remoteAddress: req.socket.remoteAddress ?? '' },
        res: { statusCode: res.statusCode },
        responseTime: Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10,
      };
      if (res.statusCode >= 500) logger.error(line, 'hook answered');
      else logger.info(line, 'hook answered');
    });
  };
}
