import { ApiError } from '../errors';
import { carriesKey } from '../keys/key-format';
import type { Step } from '../pipeline';
import { sendJson } from '../send';
import type { InsightsUpstream } from '../upstream/insights-client';
import { errorForUpstream } from '../upstream/outcome';
import { callContext } from './call-context';

/** Parameter names that carry credentials; never forwarded. */
const CREDENTIAL_NAME = /^(?:x[-_]?)?api[-_]?key$|^apikey$|^key$|^token$|^access[-_]?token$/i;

/**
 * The insights area's parameters are not defined yet, so they pass through, except anything that
 * carries a key: a credential-like name, a name or value containing the caller's key or this
 * project's key prefix. Such a request is refused, and nothing of it goes upstream.
 */
function refuseCredentials(rawQuery: string, keyValue: string | string[] | undefined): void {
  if (rawQuery === '') return;
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (CREDENTIAL_NAME.test(name) || carriesKey(name, keyValue) || carriesKey(value, keyValue)) {
      // A name that carries a key is not echoed back as the parameter.
      throw new ApiError('invalid_parameter', { parameter: carriesKey(name, keyValue) ? 'query' : name }, undefined,
        'Keys go in the x-api-key header, never in the query.');
    }
  }
}

/** Seconds an Advanced caller is told to wait before asking for an unconfigured insights area again. */
const INSIGHTS_RETRY_AFTER_SECONDS = 3600;

/**
 * `GET /v1/insights/*`: proxied to the insights service when one is configured; otherwise 503
 * `not_configured` (the area is announced, not live). The sub-path was checked segment by segment
 * by the router, so it cannot traverse the insights service's paths.
 */
export function insights(upstream: InsightsUpstream): Step {
  return async function answerInsights(ctx) {
    if (!upstream.configured()) {
      throw new ApiError('not_configured', {}, INSIGHTS_RETRY_AFTER_SECONDS, 'The insights area is announced but not live yet.').because('insights_not_configured');
    }
    refuseCredentials(ctx.rawQuery, ctx.req.headers['x-api-key']);
    const result = await upstream.forward(ctx.params.subPath ?? '', ctx.rawQuery, callContext(ctx));
    if (result.kind === 'answer') return sendJson(ctx.res, 200, result.body);
    if (result.kind === 'refused') throw new ApiError('invalid_parameter', { parameter: result.parameter }).because('insights_refused_query');
    throw errorForUpstream(result);
  };
}
