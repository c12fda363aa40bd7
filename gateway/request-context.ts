import type { CursorFilters } from './cursor/cursor-codec';
import type { KeyRecord } from './keys/key-record';
import type { ItemQuery, ListQuery } from './validation/query';

/**
 * What the pipeline learns about a request, typed once (`res.locals`). Each policy fills in its part;
 * later steps read it.
 */
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /** The request id: the caller's `x-request-id` when well-formed, else generated. */
      requestId: string;
      /** The client address after the trusted-proxy rule, normalised. */
      clientIp: string;
      /** Set by `authenticate`. */
      key?: KeyRecord;
      /** The error code of the answer, for the log line. */
      errorCode?: string;
      /** True once the limit headers have been set for this answer. */
      limitHeadersSet?: boolean;
      listQuery?: ListQuery;
      itemQuery?: ItemQuery;
      cursorFilters?: CursorFilters;
      /** Position in the data service decoded from the caller's cursor. */
      cursorPosition?: string;
    }
  }
}

export {};
