/**
 * The response-conformance check of the test kit (test/kit/openapi-conformance.ts): it must accept
 * answers the document describes and name every way an answer departs from it.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { assertConforms, ConformanceError, conformanceProblems, isDocumentedSurface, KNOWN_DEPARTURES, UNREADABLE_REQUEST_BYTES, type ObservedAnswer } from '../kit/openapi-conformance';

const JSON_TYPE = 'application/json; charset=utf-8';
const LIMIT_HEADERS = {
  'ratelimit-policy': '"minute";q=60;w=60, "day";q=10000;w=86400, "month";q=250000;w=2678400',
  ratelimit: '"minute";r=59;t=42, "day";r=9999;t=51000, "month";r=249999;t=1900000',
};
/** The 200s that could be compressed (pages, listings, insights answers, the reference) say so. */
const VARY = { vary: 'Accept-Encoding' };
const PAGE_HEADERS = { ...LIMIT_HEADERS, ...VARY };
const LISTING = { id: 'gb-0004711', country: 'GB', listing_type: 'sale', property_type: 'apartment', price: 1, extra: { nested: true } };

function answer(path: string, status: number, body: unknown, headers: IncomingHttpHeaders = {}, method = 'GET'): ObservedAnswer {
  const isError = status >= 400;
  return {
    method,
    path,
    status,
    headers: { 'x-request-id': 'req-1', 'content-type': JSON_TYPE, ...(isError ? { 'cache-control': 'no-store' } : {}), ...headers },
    text: typeof body === 'string' ? body : JSON.stringify(body),
  };
}
const error = (code: string, extras: Record<string, string> = {}): Record<string, string> => ({ error: code, message: 'text', ...extras });

describe('openapi conformance check', () => {
  test('covers paths under /v1 and /docs only', () => {
    for (const p of ['/v1/ping', '/v1', '/v1?x', '/docs', '/docs/assets/x', '/v1/properties?country=GB']) expect(isDocumentedSurface(p)).toBe(true);
    for (const p of ['/', '/V1/ping', '/v10/ping', '/docsx', '/admin/keys', '/metrics']) expect(isDocumentedSurface(p)).toBe(false);
    expect(conformanceProblems(answer('/admin/keys', 201, 'anything'))).toEqual([]);
  });

  test.each<[string, ObservedAnswer]>([
    ['ping', answer('/v1/ping', 200, { ip: '127.0.0.1', key_id: 'k', tier: 'standard' }, LIMIT_HEADERS)],
    ['a page', answer('/v1/properties?country=gb&limit=1', 200, { data: [LISTING], next_cursor: 'abc' }, PAGE_HEADERS)],
    ['a gzip page', answer('/v1/properties?country=gb&limit=1', 200, { data: [LISTING], next_cursor: 'abc' }, { ...PAGE_HEADERS, 'content-encoding': 'gzip' })],
    ['the last page', answer('/v1/properties?country=GB', 200, { data: [], next_cursor: null }, PAGE_HEADERS)],
    ['a listing', answer('/v1/properties/gb-0004711?country=GB', 200, { data: LISTING }, PAGE_HEADERS)],
    ['an insights answer in br', answer('/v1/insights/prices', 200, { place: 'GB' }, { ...PAGE_HEADERS, 'content-encoding': 'br' })],
    ['invalid_parameter with parameter', answer('/v1/ping?x=1', 400, error('invalid_parameter', { parameter: 'x' }), LIMIT_HEADERS)],
    ['401 without limit headers', answer('/v1/properties', 401, error('unauthenticated'))],
    ['ip_not_allowed with ip', answer('/v1/ping', 403, error('ip_not_allowed', { ip: '127.0.0.2' }))],
    ['429 with Retry-After', answer('/v1/ping', 429, error('rate_limited'), { ...LIMIT_HEADERS, 'retry-after': '17' })],
    ['an unknown code of a documented status', answer('/v1/ping', 503, error('some_new_code'), { 'retry-after': '1' })],
    ['503 on a multi-segment insights path', answer('/v1/insights/prices/GB/2025', 503, error('not_configured'), { 'retry-after': '3600' })],
    ['405 with Allow', answer('/v1/properties', 405, error('method_not_allowed'), { allow: 'GET' }, 'POST')],
    ['405 to HEAD, no body', { ...answer('/docs', 405, '', { allow: 'GET' }, 'HEAD'), text: '' }],
    ['404 for a malformed id, any method', answer('/v1/properties/..', 404, error('not_found'), {}, 'DELETE')],
    ['an unknown path answered 404', answer('/v1/pong', 404, error('not_found'))],
    ['/docs as HTML', answer('/docs', 200, '<!DOCTYPE html>', { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'self'", ...VARY })],
    ['an asset', answer('/docs/assets/swagger-ui.css', 200, 'body{}', { 'content-type': 'text/css; charset=utf-8', ...VARY, 'content-encoding': 'zstd' })],
  ])('accepts %s', (_name, a) => {
    expect(conformanceProblems(a)).toEqual([]);
    expect(() => assertConforms(a)).not.toThrow();
  });

  test.each<[string, ObservedAnswer, RegExp]>([
    ['an undocumented status', answer('/v1/ping', 418, error('teapot')), /status 418 is not documented for GET \/v1\/ping/],
    ['a body off its schema', answer('/v1/ping', 200, { ip: '127.0.0.1', key_id: 'k', tier: 'gold' }, LIMIT_HEADERS), /body \/tier must be equal to one of the allowed values/],
    ['a missing required field', answer('/v1/properties?country=GB', 200, { data: [] }, PAGE_HEADERS), /must have required property 'next_cursor'/],
    ['an internal field of a listing', answer('/v1/properties/x?country=GB', 200, { data: { ...LISTING, withdrawn: false } }, PAGE_HEADERS), /property name must be valid/],
    ['a page without Vary', answer('/v1/properties?country=GB', 200, { data: [], next_cursor: null }, LIMIT_HEADERS), /required header Vary is missing/],
    ['a Vary without Accept-Encoding', answer('/v1/openapi.json', 200, { openapi: '3.1.0', info: {}, paths: {} }, { vary: 'Origin' }), /header Vary: "Origin" must match pattern/],
    ['a coding not offered', answer('/v1/properties?country=GB', 200, { data: [], next_cursor: null }, { ...PAGE_HEADERS, 'content-encoding': 'deflate' }), /header Content-Encoding: "deflate" must be equal to one of the allowed values/],
    ['an error body without message', answer('/v1/ping', 401, { error: 'unauthenticated' }), /must have required property 'message'/],
    ['a missing Retry-After', answer('/v1/ping', 429, error('rate_limited'), LIMIT_HEADERS), /required header Retry-After is missing/],
    ['a Retry-After of 0', answer('/v1/ping', 503, error('service_unavailable'), { 'retry-after': '0' }), /header Retry-After: "0" must be >= 1/],
    ['a missing Cache-Control on an error', answer('/v1/ping', 401, error('unauthenticated'), { 'cache-control': undefined }), /required header Cache-Control is missing/],
    ['missing RateLimit headers on a keyed 200', answer('/v1/ping', 200, { ip: '127.0.0.1', key_id: 'k', tier: 'standard' }), /required header RateLimit-Policy is missing/],
    ['a malformed RateLimit header', answer('/v1/ping', 200, { ip: '::1', key_id: 'k', tier: 'advanced' }, { ...LIMIT_HEADERS, ratelimit: 'r=1' }), /header RateLimit: "r=1" must match pattern/],
    ['a wrong content type', answer('/v1/ping', 401, error('unauthenticated'), { 'content-type': 'text/plain' }), /Content-Type "text\/plain" is not one of application\/json/],
    ['a body that is not JSON', answer('/v1/ping', 401, '<html>'), /body is not JSON/],
    ['an unknown path answered 200', answer('/v1/pong', 200, {}), /matches no path of the document, so the answer must be 404/],
    ['another method answered 200', answer('/v1/ping', 200, {}, {}, 'POST'), /POST is not an operation of \/v1\/ping, so the answer must be 405/],
    ['ip_not_allowed without ip', answer('/v1/ping', 403, error('ip_not_allowed')), /must have required property 'ip'/],
    ['a stack trace in an error body', answer('/v1/ping', 500, { ...error('internal_error'), stack: 'Error: at x' }), /must NOT have additional properties/],
    ['a 405 without Allow', answer('/v1/ping', 405, error('method_not_allowed'), {}, 'PUT'), /required header Allow is missing/],
  ])('names %s', (_name, a, expected) => {
    const problems = conformanceProblems(a);
    expect(problems.join('\n')).toMatch(expected);
    expect(() => assertConforms(a)).toThrow(ConformanceError);
  });

  test('a request over 16 KB may be answered 400 invalid_parameter on any path, a smaller one not', () => {
    const big = { ...answer('/v1/nowhere;x?a=1', 400, error('invalid_parameter', { parameter: 'a' })), requestHeadBytes: UNREADABLE_REQUEST_BYTES + 1 };
    expect(conformanceProblems(big)).toEqual([]);
    expect(conformanceProblems({ ...big, requestHeadBytes: 200 }).join('\n')).toMatch(/must be 404 not_found/);
    expect(conformanceProblems({ ...big, text: JSON.stringify({ error: 'invalid_parameter' }) }).join('\n')).toMatch(/must have required property 'message'/);
  });

  test('no departure is excused: a missing X-Request-Id fails on any answer, the raw 400 of a malformed request included', () => {
    expect(KNOWN_DEPARTURES).toEqual([]);
    const framing400 = answer('/v1/properties?country=GB', 400, { error: 'invalid_parameter', message: 'The request is malformed or too large.', parameter: 'request' }, { connection: 'close' });
    expect(conformanceProblems(framing400)).toEqual([]);
    delete framing400.headers['x-request-id'];
    expect(conformanceProblems(framing400).join('\n')).toMatch(/required header X-Request-Id is missing/);
    const other = answer('/v1/ping', 401, error('unauthenticated'));
    delete other.headers['x-request-id'];
    expect(conformanceProblems(other).join('\n')).toMatch(/required header X-Request-Id is missing/);
  });
});
