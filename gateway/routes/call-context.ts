import type { Response } from 'express';
import type { CallContext } from '../upstream/json-caller';

/** An upstream call's context: the request id, and a signal that fires if the caller goes away. */
export function callContext(res: Response): CallContext {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return { requestId: res.locals.requestId, signal: controller.signal };
}
