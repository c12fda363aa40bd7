import type { CallerIdentity, IdentitySigner } from './caller-identity';
import { createJsonCaller, isFailure, type CallContext, type JsonCaller } from './json-caller';
import type { UpstreamFailure } from './outcome';

export type InsightsResult = { readonly kind: 'answer'; readonly body: unknown } | { readonly kind: 'refused'; readonly parameter: string } | UpstreamFailure;

export interface InsightsUpstream {
  /** True when an insights service is configured. */
  configured(): boolean;
  /**
   * Forwards `GET /v1/insights<subPath>?<rawQuery>` to the insights service's `<subPath>?<rawQuery>`,
   * with the caller's signed identity (caller-identity.ts), never its key.
   */
  forward(subPath: string, rawQuery: string, ctx: CallContext, caller: CallerIdentity): Promise<InsightsResult>;
  /** Hot reload: a new URL, or undefined to switch the area off. */
  update(url: string | undefined): void;
  close(): Promise<void>;
}

/**
 * The insights area's upstream, when configured. Its answers pass through as JSON (the gateway does
 * not reshape them); a 404 is `not_found`, another 4xx is the caller's query (`invalid_parameter`),
 * failures map like the data service's.
 */
export function createInsightsUpstream(url: string | undefined, timeoutMs: number, sign: IdentitySigner): InsightsUpstream {
  let current: { url: string; caller: JsonCaller } | undefined;
  const connect = (u: string | undefined): void => {
    if (current?.url === u) return;
    const previous = current;
    current = u ? { url: u, caller: createJsonCaller(u, timeoutMs, 32) } : undefined;
    // Requests already on the old pool finish; it closes when they have.
    if (previous) void previous.caller.close();
  };
  connect(url);

  return {
    configured: () => current !== undefined,
    async forward(subPath, rawQuery, ctx, caller) {
      if (!current) return { kind: 'unavailable' };
      const answer = await current.caller.get(`${subPath || '/'}${rawQuery ? `?${rawQuery}` : ''}`, { ...ctx, headers: sign(caller, ctx.requestId) });
      if (isFailure(answer)) return answer;
      if (answer.status >= 200 && answer.status < 300) return { kind: 'answer', body: answer.body };
      if (answer.status === 404) return { kind: 'not_found' };
      // Nothing of the upstream's body reaches the caller: its refusal is the caller's query.
      if (answer.status >= 400 && answer.status < 500) return { kind: 'refused', parameter: 'query' };
      return { kind: 'server_error', status: answer.status };
    },
    update: connect,
    close: async () => {
      await current?.caller.close();
    },
  };
}
