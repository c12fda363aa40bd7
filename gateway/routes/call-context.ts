import type { RequestContext } from '../pipeline';
import { CallSignal, type CallContext } from '../upstream/json-caller';

/** An upstream call's context: the request id, and a signal aborted if the caller goes away. */
export function callContext(ctx: RequestContext): CallContext {
  const signal = new CallSignal();
  const { res } = ctx;
  res.once('close', () => {
    if (!res.writableFinished) signal.abort();
  });
  return { requestId: ctx.requestId, signal };
}
