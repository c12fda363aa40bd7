import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CursorFilters } from './cursor/cursor-codec';
import type { KeyRecord } from './keys/key-record';
import type { CallTrace } from './upstream/json-caller';
import type { ItemQuery, ListQuery } from './validation/query';

/** The endpoints of the public surface. */
export type RouteName = 'ping' | 'properties' | 'property' | 'insights' | 'reference';

/**
 * What the pipeline knows about one request, typed once. Each step fills in its part; later
 * steps read it.
 */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The request target's path, as sent (not decoded). */
  readonly path: string;
  /** The query string as sent, without the `?`. */
  readonly rawQuery: string;
  /** The request id: the caller's `x-request-id` when well-formed, else generated. */
  readonly requestId: string;
  /** The client address after the trusted-proxy rule, normalised. */
  readonly clientIp: string;
  /** The route that answers, once known ("unmatched" for 404s): a bounded metrics label. */
  route: RouteName | 'unmatched';
  /** Path parameters, percent-decoded: `id` of /v1/properties/{id}, `subPath` of /v1/insights/... */
  params: { id?: string; subPath?: string };
  /** Set by `authenticate`. */
  key?: KeyRecord;
  /** The error code of the answer, for the log line and metrics. */
  errorCode?: string;
  /** Why it was refused, for the log line only (see log-reasons.ts). */
  reason?: string;
  /** The id of a record that was found but refused before `key` was set (revoked, grace over): logged only. */
  refusedKeyId?: string;
  /** Which value of the key authenticated: during a roll the previous one still does until its grace ends. */
  keyValue?: 'current' | 'previous';
  /** The limit window that refused (429): `minute`, `day` or `month`. */
  window?: string;
  /** The data service failure behind a 5xx (`timeout`, `unreachable`...). */
  upstream?: string;
  /** Set by the limit step when it counted the request: when, and where (a 500/503 gives it back). */
  counted?: { readonly atMs: number; readonly store: 'shared' | 'local' | undefined };
  listQuery?: ListQuery;
  itemQuery?: ItemQuery;
  cursorFilters?: CursorFilters;
  /** Position in the data service decoded from the caller's cursor. */
  cursorPosition?: string;
  /** This request's trace: set only when tracing is on (gateway/tracing/). */
  trace?: RequestTrace;
  /** How the answer's body was sent, when it could have been compressed (send.ts): for the access line. */
  encoded?: { readonly encoding: string; readonly bytes: number; readonly sentBytes: number };
}

/** A request whose key is known (set by `authenticate`). */
export type Keyed = { readonly key: KeyRecord };
/** A request of `GET /v1/properties` whose query was checked (`validateListQuery`). */
export type WithListQuery = { readonly listQuery: ListQuery };
/** A request of `GET /v1/properties/{id}` whose query was checked (`validateItemQuery`). */
export type WithItemQuery = { readonly itemQuery: ItemQuery };
/** A list request whose cursor's filters are decided (`openCursor`). */
export type WithCursor = { readonly cursorFilters: CursorFilters };

/** One span of a step (key look-up, limit check): ended once, with what went wrong if anything did. */
export interface StepSpan {
  end(error?: string): void;
}

/**
 * The hooks a request's trace offers the pipeline (implemented in gateway/tracing/, loaded only
 * when tracing is on). A trace that was not sampled offers the same hooks at next to no cost.
 */
export interface RequestTrace extends CallTrace {
  /** A child span of the request's server span. */
  step(name: string): StepSpan;
  /** The answer is done: the server span ends with the route, status, error and key id. */
  end(ctx: RequestContext, status: number): void;
  /** The ids for the access line, when the server span is recorded. */
  ids(): { readonly traceId: string; readonly spanId: string } | undefined;
}

/** The context of a request handed to the reference app (express), so its answers are logged like the others. */
export const referenceContexts = new WeakMap<IncomingMessage, RequestContext>();

/** Starts a request's trace (continuing the caller's `traceparent`); undefined for paths not traced. */
export type RequestTracer = (req: IncomingMessage, path: string) => RequestTrace | undefined;

/**
 * One step of a route: a policy or the final handler. It either returns (the next step runs),
 * throws an `ApiError` (the error handler answers), or answers itself (the last step). Typed by
 * what it needs of the context (`Needs`: set by the steps before it, e.g. `{ key: KeyRecord }`)
 * and what it sets for the steps after it (`Adds`: read by the compiler only, through `Route`).
 */
export interface Step<Needs extends object = object, Adds extends object = object> {
  (ctx: RequestContext & Needs): void | Promise<void>;
  /** Never set: what the step adds to the context, for `Route.then` to check the steps after it. */
  readonly adds?: Adds;
}

/** A step as the runner calls it, once its route's order was checked by `Route.then`. */
type CheckedStep = (ctx: RequestContext) => void | Promise<void>;

/**
 * A route's steps in order, typed by what its requests hold from the start (`Start`: what the
 * router matched, e.g. `{ params: { id: string } }`) and what they hold once the steps so far ran
 * (`Has`): `then` accepts a step only when the steps before it set what it needs, so no step reads
 * a field that may not be there.
 */
export class Route<Start extends object, Has extends object = Start> {
  private constructor(readonly steps: readonly CheckedStep[]) {}

  /** An empty route whose requests hold `Start`. */
  static start<Start extends object = object>(): Route<Start> {
    return new Route<Start>([]);
  }

  then<Adds extends object>(step: Step<Has, Adds>): Route<Start, Has & Adds> {
    return new Route<Start, Has & Adds>([...this.steps, step as unknown as CheckedStep]);
  }

  /** Runs the steps in order on a request holding `Start`; a synchronous step costs no promise. */
  async run(ctx: RequestContext & Start): Promise<void> {
    for (const step of this.steps) {
      const pending = step(ctx);
      if (pending) await pending;
    }
  }
}
