import type { RequestHandler } from 'express';
import { ApiError } from '../errors';

/** Seconds an Advanced caller is told to wait before asking for the insights area again. */
const INSIGHTS_RETRY_AFTER_SECONDS = 3600;

/** `GET /v1/insights/*`: announced, not live: 503 `not_configured` for Advanced keys. */
export function insightsNotLive(): RequestHandler {
  return function answerInsightsNotLive() {
    throw new ApiError('not_configured', {}, INSIGHTS_RETRY_AFTER_SECONDS, 'The insights area is announced but not live yet.');
  };
}
