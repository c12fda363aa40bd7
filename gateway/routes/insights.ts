import { ApiError } from '../errors';
import { carriesKey } from '../keys/key-format';
import type { KeyRecord } from '../keys/key-record';
import { normaliseCountry } from '../validation/iso-countries';
import type { Keyed, Step } from '../pipeline';
import { sendJsonCompressible } from '../compression/send-compressed';
import type { InsightsUpstream } from '../upstream/insights-client';
import { errorForUpstream } from '../upstream/outcome';
import { callContext } from './call-context';

/** Parameter names that carry credentials; never forwarded. */
const CREDENTIAL_NAME = /^(?:x[-_]?)?api[-_]?key$|^apikey$|^key$|^token$|^access[-_]?token$/i;

/** Percent-decodings applied to a query text before looking for a key in it (double-encoding and more). */
const MAX_DECODINGS = 3;
/** A run of base64 / base64url characters long enough to hide a key. */
const BASE64_RUN = /[A-Za-z0-9+/_-]{12,}={0,2}/g;

/** The text, its repeated percent-decodings, and the base64 decodings of long runs in each. */
function spellings(text: string): string[] {
  const out = [text];
  let current = text;
  for (let i = 0; i < MAX_DECODINGS && current.includes('%'); i++) {
    try {
      current = decodeURIComponent(current);
    } catch {
      break;
    }
    out.push(current);
  }
  for (const t of [...out]) for (const run of t.match(BASE64_RUN) ?? []) out.push(Buffer.from(run, 'base64').toString('latin1'));
  return out;
}

/** True when any spelling of `text` carries the caller's key or one in the project's format. */
const carriesKeyCopy = (text: string, keyValue: string | string[] | undefined): boolean => spellings(text).some((t) => carriesKey(t, keyValue));

/**
 * The insights area's parameters are not defined yet, so they pass through, except:
 * - anything that carries a key, in any spelling (a credential-like name; the caller's key or one in
 *   this project's format, as sent, percent-decoded once or more, or base64-encoded): refused, and
 *   nothing of the request goes upstream;
 * - a `country` outside the key's countries: 403 `country_not_entitled` (the insights service gets
 *   the key's countries in the signed identity too, and must apply them to everything else).
 */
function checkQuery(rawQuery: string, keyValue: string | string[] | undefined, key: KeyRecord): void {
  if (rawQuery === '') return;
  if (carriesKeyCopy(rawQuery, keyValue)) {
    for (const [name, value] of new URLSearchParams(rawQuery)) {
      if (carriesKeyCopy(value, keyValue) && !carriesKeyCopy(name, keyValue)) throw keyInQuery(name);
    }
    throw keyInQuery('query');
  }
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (CREDENTIAL_NAME.test(name)) throw keyInQuery(name);
    if (name.toLowerCase() === 'country') {
      const country = normaliseCountry(value);
      if (!country) throw new ApiError('invalid_parameter', { parameter: name }, undefined, 'Parameter "country" must be an ISO 3166-1 alpha-2 code.');
      if (!key.countries.has(country)) throw new ApiError('country_not_entitled');
    }
  }
}

/** A name that carries a key is not echoed back as the parameter. */
const keyInQuery = (parameter: string): ApiError =>
  new ApiError('invalid_parameter', { parameter }, undefined, 'Keys go in the x-api-key header, never in the query.');

/** Seconds an Advanced caller is told to wait before asking for an unconfigured insights area again. */
const INSIGHTS_RETRY_AFTER_SECONDS = 3600;

/**
 * `GET /v1/insights/*`: proxied to the insights service when one is configured; otherwise 503
 * `not_configured` (the area is announced, not live). The sub-path was checked segment by segment
 * by the router, so it cannot traverse the insights service's paths.
 */
export function insights(upstream: InsightsUpstream): Step<Keyed & { readonly params: { readonly subPath: string } }> {
  return async function answerInsights(ctx) {
    if (!upstream.configured()) {
      throw new ApiError('not_configured', {}, INSIGHTS_RETRY_AFTER_SECONDS, 'The insights area is announced but not live yet.').because('insights_not_configured');
    }
    const { key } = ctx;
    checkQuery(ctx.rawQuery, ctx.req.headers['x-api-key'], key);
    const result = await upstream.forward(ctx.params.subPath, ctx.rawQuery, callContext(ctx), { keyId: key.id, tier: key.tier, countries: key.countries });
    if (result.kind === 'answer') return sendJsonCompressible(ctx, Buffer.from(JSON.stringify(result.body)));
    if (result.kind === 'refused') throw new ApiError('invalid_parameter', { parameter: result.parameter }).because('insights_refused_query');
    throw errorForUpstream(result);
  };
}
