import { ApiError } from '../errors';
import type { Step } from '../pipeline';
import { sendJson } from '../send';
import type { InsightsUpstream } from '../upstream/insights-client';
import { errorForUpstream } from '../upstream/outcome';
import { callContext } from './call-context';

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
      throw new ApiError('not_configured', {}, INSIGHTS_RETRY_AFTER_SECONDS, 'The insights area is announced but not live yet.');
    }
    const result = await upstream.forward(ctx.params.subPath ?? '', ctx.rawQuery, callContext(ctx));
    if (result.kind === 'answer') return sendJson(ctx.res, 200, result.body);
    if (result.kind === 'refused') throw new ApiError('invalid_parameter', { parameter: result.parameter });
    throw errorForUpstream(result);
  };
}
