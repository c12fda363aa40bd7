import type { RequestContext } from '../pipeline';
import { CallSignal, type CallContext } from '../upstream/json-caller';

/** An upstream call's context: the request id, and a signal aborted if the caller goes away. */
export function callContext(ctx: RequestContext): CallContext {
  const signal = new CallSignal();
  const { res } = ctx;
  const onClose = (): void => {
    if (!res.writableFinished) signal.abort();
  };
  // The caller may have left already (during the key or limit steps): its 'close' was emitted then.
  if (res.closed) onClose();
  else res.once('close', onClose);
  return ctx.trace ? { requestId: ctx.requestId, signal, trace: ctx.trace } : { requestId: ctx.requestId, signal };
}
