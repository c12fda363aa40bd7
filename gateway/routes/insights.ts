import type { RequestHandler } from 'express';
import { ApiError } from '../errors';
import { sendJson } from '../send';
import type { InsightsUpstream } from '../upstream/insights-client';
import { errorForUpstream } from '../upstream/outcome';
import { rawQueryOf } from '../validation/query';
import { callContext } from './call-context';

/** Seconds an Advanced caller is told to wait before asking for an unconfigured insights area again. */
const INSIGHTS_RETRY_AFTER_SECONDS = 3600;

/**
 * `GET /v1/insights/*`: proxied to the insights service when one is configured; otherwise 503
 * `not_configured` (the area is announced, not live).
 */
export function insights(upstream: InsightsUpstream): RequestHandler {
  return async function answerInsights(req, res) {
    if (!upstream.configured()) {
      throw new ApiError('not_configured', {}, INSIGHTS_RETRY_AFTER_SECONDS, 'The insights area is announced but not live yet.');
    }
    const path = req.path.slice('/v1/insights'.length);
    const result = await upstream.forward(path, rawQueryOf(req.url), callContext(res));
    if (result.kind === 'answer') return sendJson(res, 200, result.body);
    if (result.kind === 'refused') throw new ApiError('invalid_parameter', { parameter: result.parameter });
    throw errorForUpstream(result);
  };
}
