import type { RequestContext } from '../pipeline';
import type { CallContext } from '../upstream/json-caller';

/** An upstream call's context: the request id, and a controller aborted if the caller goes away. */
export function callContext(ctx: RequestContext): CallContext {
  const controller = new AbortController();
  const { res } = ctx;
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return { requestId: ctx.requestId, controller };
}
