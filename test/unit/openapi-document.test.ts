import fs from 'node:fs';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import YAML from 'yaml';
import { ERROR_CATALOGUE, ERROR_CODES } from '../../gateway/errors';
import { createReferenceRouter, DOCS_CSP, REFERENCE_PATHS } from '../../gateway/reference/reference-router';
import { findRepoRoot } from '../../gateway/repo-root';

const ROOT = path.resolve(__dirname, '..', '..');
const DOC_FILE = path.join(ROOT, 'openapi', 'openapi.yaml');

type Json = Record<string, unknown>;
const doc = YAML.parse(fs.readFileSync(DOC_FILE, 'utf8')) as Json;

/** Follows a local `$ref` ("#/a/b/c") inside the document. */
function deref<T = Json>(node: unknown): T {
  let current = node as Json;
  const seen = new Set<string>();
  while (current && typeof current === 'object' && typeof current.$ref === 'string') {
    const ref = current.$ref;
    if (seen.has(ref)) throw new Error(`circular $ref ${ref}`);
    seen.add(ref);
    if (!ref.startsWith('#/')) throw new Error(`non-local $ref ${ref}`);
    let target: unknown = doc;
    for (const raw of ref.slice(2).split('/')) {
      const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      target = (target as Json | undefined)?.[key];
    }
    if (target === undefined) throw new Error(`unresolved $ref ${ref}`);
    current = target as Json;
  }
  return current as T;
}

/** Every `$ref` string anywhere in the document. */
function allRefs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => allRefs(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else allRefs(v, out);
    }
  }
  return out;
}

interface ErrorExample { status: number; code: string; message: unknown; where: string }

/** The `error` values of the examples of every error response, with the status they are given under. */
function errorExamplesOf(responses: Json, where: string): ErrorExample[] {
  const found: ErrorExample[] = [];
  for (const [status, raw] of Object.entries(responses)) {
    const response = deref<Json>(raw);
    const media = deref<Json>((response.content as Json | undefined)?.['application/json']);
    if (!media) continue;
    const values: unknown[] = [];
    if (media.example !== undefined) values.push(media.example);
    for (const ex of Object.values((media.examples ?? {}) as Json)) values.push(deref<Json>(ex).value);
    for (const value of values) {
      if (value && typeof value === 'object' && typeof (value as Json).error === 'string') {
        found.push({ status: Number(status), code: (value as Json).error as string, message: (value as Json).message, where });
      }
    }
  }
  return found;
}

const paths = doc.paths as Record<string, Record<string, Json>>;
const components = doc.components as Record<string, Record<string, Json>>;

const operationErrors: ErrorExample[] = Object.entries(paths).flatMap(([p, item]) =>
  Object.entries(item).flatMap(([method, op]) => errorExamplesOf(op.responses as Json, `${method.toUpperCase()} ${p}`)),
);
const componentErrors: ErrorExample[] = Object.entries(components.responses ?? {}).flatMap(([name, response]) =>
  errorExamplesOf({ [String(inferStatus(name))]: response }, `components/responses/${name}`),
);

/** Status of a named response component as used by the operations (per-code names map through the catalogue). */
function inferStatus(name: string): number {
  if (name in ERROR_CATALOGUE) return ERROR_CATALOGUE[name as keyof typeof ERROR_CATALOGUE].status;
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item)) {
      for (const [status, r] of Object.entries(op.responses as Json)) {
        if ((r as Json).$ref === `#/components/responses/${name}`) return Number(status);
      }
    }
  }
  return NaN;
}

function codesOf(opPath: string): Record<number, string[]> {
  const byStatus: Record<number, string[]> = {};
  for (const e of operationErrors.filter((x) => x.where === `GET ${opPath}`)) (byStatus[e.status] ??= []).push(e.code);
  for (const list of Object.values(byStatus)) list.sort();
  return byStatus;
}

describe('openapi/openapi.yaml', () => {
  test('is an OpenAPI 3.1 document with the ApiKey scheme', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(components.securitySchemes?.ApiKey).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-api-key' }));
    expect(doc.security).toEqual([{ ApiKey: [] }]);
  });

  test('every $ref resolves', () => {
    for (const ref of allRefs(doc)) expect(() => deref({ $ref: ref })).not.toThrow();
  });

  test('documents exactly the public paths, GET only', () => {
    expect(Object.keys(paths).sort()).toEqual(
      ['/docs', '/docs/assets/{file}', '/v1/insights', '/v1/insights/{path}', '/v1/openapi.json', '/v1/ping', '/v1/properties', '/v1/properties/{id}'].sort(),
    );
    for (const item of Object.values(paths)) {
      expect(Object.keys(item).filter((k) => ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].includes(k))).toEqual(['get']);
    }
  });

  test('the reference paths need no key; the others use the global ApiKey requirement', () => {
    expect(paths['/v1/openapi.json']?.get?.security).toEqual([]);
    expect(paths['/docs']?.get?.security).toEqual([]);
    expect(paths['/docs/assets/{file}']?.get?.security).toEqual([]);
    for (const p of ['/v1/ping', '/v1/properties', '/v1/properties/{id}', '/v1/insights', '/v1/insights/{path}']) {
      expect(paths[p]?.get?.security).toBeUndefined();
    }
  });

  test('every code of the catalogue appears, with the catalogue status and message', () => {
    const all = [...operationErrors, ...componentErrors];
    for (const code of ERROR_CODES) {
      const uses = all.filter((e) => e.code === code);
      expect({ code, used: uses.length > 0 }).toEqual({ code, used: true });
      for (const use of uses) {
        expect({ code, where: use.where, status: use.status, message: use.message }).toEqual({
          code, where: use.where, status: ERROR_CATALOGUE[code].status, message: ERROR_CATALOGUE[code].message,
        });
      }
      // Each code is also reachable from at least one operation.
      expect({ code, inOperations: operationErrors.some((e) => e.code === code) }).toEqual({ code, inOperations: true });
      // And has its own response component.
      expect(components.responses?.[code]).toBeDefined();
    }
  });

  test('no code appears that is not in the catalogue', () => {
    const unknown = [...operationErrors, ...componentErrors].filter((e) => !(e.code in ERROR_CATALOGUE));
    expect(unknown).toEqual([]);
  });

  test('every code is in the overview table of info.description', () => {
    const description = (doc.info as Json).description as string;
    for (const code of ERROR_CODES) {
      expect(description).toContain(`| \`${code}\` | ${ERROR_CATALOGUE[code].status} |`);
    }
  });

  test('the ErrorBody schema keeps `error` open (no enum) and documents parameter and ip', () => {
    // Named ErrorBody, not Error: generated clients must not shadow JavaScript's Error.
    expect(components.schemas?.Error).toBeUndefined();
    const schema = components.schemas?.ErrorBody as Json;
    expect(schema.required).toEqual(['error', 'message']);
    const props = schema.properties as Record<string, Json>;
    expect(props.error?.type).toBe('string');
    expect(props.error?.enum).toBeUndefined();
    expect(props.parameter?.type).toBe('string');
    expect(props.ip?.type).toBe('string');
  });

  test('each operation lists the codes that apply to it', () => {
    const common = {
      401: ['unauthenticated'],
      405: ['method_not_allowed'],
      429: ['quota_exceeded', 'rate_limited'],
      500: ['internal_error'],
      503: ['not_configured', 'service_unavailable'],
    };
    // /v1/ping takes no parameters: any query parameter is refused (after the 429 step).
    expect(codesOf('/v1/ping')).toEqual({ ...common, 400: ['invalid_parameter'], 403: ['ip_not_allowed', 'key_paused'] });
    expect(codesOf('/v1/properties')).toEqual({
      ...common,
      400: ['invalid_cursor', 'invalid_parameter'],
      403: ['country_not_entitled', 'ip_not_allowed', 'key_paused'],
      404: ['not_found'],
    });
    expect(codesOf('/v1/properties/{id}')).toEqual({
      ...common,
      400: ['invalid_parameter'],
      403: ['country_not_entitled', 'ip_not_allowed', 'key_paused'],
      404: ['not_found'],
    });
    // Insights: not live (503 not_configured), or the operator's insights service answering through the gateway.
    for (const p of ['/v1/insights', '/v1/insights/{path}']) {
      expect(codesOf(p)).toEqual({ ...common, 400: ['invalid_parameter'], 403: ['ip_not_allowed', 'key_paused', 'upgrade_required'], 404: ['not_found'] });
    }
    expect(codesOf('/v1/openapi.json')).toEqual({ 405: ['method_not_allowed'] });
    expect(codesOf('/docs')).toEqual({ 405: ['method_not_allowed'] });
    expect(codesOf('/docs/assets/{file}')).toEqual({ 404: ['not_found'], 405: ['method_not_allowed'], 500: ['internal_error'] });
  });

  test('the assets the reference page may load are exactly the documented file names', async () => {
    const param = (paths['/docs/assets/{file}']?.get?.parameters as Json[])[0]!;
    const documented = ((param.schema as Json).enum as string[]).slice().sort();
    expect(documented.length).toBeGreaterThanOrEqual(3); // the style sheet, the bundle, the page's own script
    const app = express().use(createReferenceRouter());
    for (const file of documented) expect({ file, status: (await request(app).get(`/docs/assets/${file}`)).status }).toEqual({ file, status: 200 });
    const page = (await request(app).get('/docs')).text;
    const loaded = [...page.matchAll(/(?:src|href)="\/docs\/assets\/([^"]+)"/g)].map((m) => m[1] as string);
    // The page loads every documented asset and nothing else (an empty match would prove nothing).
    expect([...new Set(loaded)].sort()).toEqual(documented);
  });

  test('every error answer says Cache-Control: no-store; 405 says Allow: GET', () => {
    const checked: string[] = [];
    for (const [p, item] of Object.entries(paths)) {
      for (const [status, raw] of Object.entries(item.get?.responses as Json)) {
        if (Number(status) < 400) continue;
        const headers = (deref<Json>(raw).headers ?? {}) as Record<string, unknown>;
        expect({ p, status, cacheControl: deref<Json>(headers['Cache-Control']) }).toEqual({
          p, status, cacheControl: expect.objectContaining({ required: true, schema: { type: 'string', const: 'no-store' } }),
        });
        if (status === '405') expect(deref<Json>(headers.Allow)).toEqual(expect.objectContaining({ required: true, schema: { type: 'string', const: 'GET' } }));
        checked.push(`${p} ${status}`);
      }
    }
    // Every path documents its 405, and the keyed ones their 401: the loop above saw them all.
    for (const p of Object.keys(paths)) expect(checked).toContain(`${p} 405`);
    for (const p of ['/v1/ping', '/v1/properties', '/v1/properties/{id}', '/v1/insights', '/v1/insights/{path}']) expect(checked).toContain(`${p} 401`);
  });

  test('RateLimit headers are required on keyed 200 and on 429 answers, optional on other errors', () => {
    for (const [p, item] of Object.entries(paths)) {
      if (item.get?.security !== undefined) continue; // reference material: no key, no limits
      for (const [status, raw] of Object.entries(item.get?.responses as Json)) {
        const headers = (deref<Json>(raw).headers ?? {}) as Record<string, unknown>;
        const required = (name: string): unknown => (name in headers ? deref<Json>(headers[name]).required === true : 'absent');
        const expected = status === '200' || status === '429' ? true : status === '401' || status === '405' ? 'absent' : false;
        expect({ p, status, policy: required('RateLimit-Policy'), state: required('RateLimit') }).toEqual({ p, status, policy: expected, state: expected });
      }
    }
  });

  test('429 and 503 answers carry Retry-After (integer >= 1); keyed answers carry X-Request-Id', () => {
    for (const [p, item] of Object.entries(paths)) {
      for (const [status, raw] of Object.entries(item.get?.responses as Json)) {
        const headers = (deref<Json>(raw).headers ?? {}) as Record<string, unknown>;
        expect({ p, status, requestId: 'X-Request-Id' in headers }).toEqual({ p, status, requestId: true });
        if (status === '429' || status === '503') {
          const retryAfter = deref<Json>(headers['Retry-After']);
          expect(retryAfter.required).toBe(true);
          expect(retryAfter.schema).toEqual({ type: 'integer', minimum: 1 });
        }
        if (status === '200' && item.get?.security === undefined) {
          expect({ p, policy: 'RateLimit-Policy' in headers, limit: 'RateLimit' in headers }).toEqual({ p, policy: true, limit: true });
        }
      }
    }
  });

  test('query parameters of GET /v1/properties follow the contract', () => {
    const params = (paths['/v1/properties']?.get?.parameters as unknown[]).map((p) => deref<Json>(p));
    const byName = Object.fromEntries(params.map((p) => [p.name as string, p]));
    expect(Object.keys(byName).sort()).toEqual(['country', 'cursor', 'limit', 'listing_type', 'property_type']);
    expect(byName.country?.required).toBe(true);
    // The assigned ISO 3166-1 codes, upper and lower case (test/integration/openapi-examples.test.ts holds the list to the gateway's).
    expect(byName.country?.schema).toMatchObject({ type: 'string', enum: expect.arrayContaining(['GB', 'gb', 'FR', 'fr']) });
    expect((byName.listing_type?.schema as Json).enum).toEqual(['sale', 'rent']);
    expect((byName.property_type?.schema as Json).enum).toEqual(['apartment', 'house', 'land', 'commercial']);
    expect(byName.limit?.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    expect((byName.cursor?.schema as Json).maxLength).toBe(1024);

    const itemParams = (paths['/v1/properties/{id}']?.get?.parameters as unknown[]).map((p) => deref<Json>(p));
    expect(itemParams.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['path:id', 'query:country']);
  });

  test('the Listing example satisfies the required fields', () => {
    const listing = components.schemas?.Listing as Json;
    expect(listing.required).toEqual(['id', 'country', 'listing_type', 'property_type']);
    const media = (paths['/v1/properties/{id}']?.get?.responses as Record<string, Json>)['200']?.content as Record<string, Json>;
    const example = (media['application/json']?.example as Json).data as Json;
    for (const field of listing.required as string[]) expect(example[field]).toBeDefined();
    expect(example.country).toMatch(/^[A-Z]{2}$/);
  });
});

describe('reference router', () => {
  const app = express();
  app.disable('x-powered-by');
  app.use(createReferenceRouter());
  app.use((_req, res) => { res.status(404).json({ error: 'not_found', message: 'Not found.' }); });

  test('findRepoRoot finds the repository from the source directory', () => {
    expect(findRepoRoot(path.join(ROOT, 'gateway', 'reference'))).toBe(ROOT);
    expect(REFERENCE_PATHS).toEqual(['/v1/openapi.json', '/docs', '/docs/assets/:file']);
  });

  test('GET /v1/openapi.json answers the document as JSON', async () => {
    const res = await request(app).get('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.headers['x-powered-by']).toBeUndefined();
    expect(res.body).toEqual(doc);
  });

  test('GET /docs answers an HTML page using local assets only, with a strict CSP', async () => {
    const res = await request(app).get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toBe(DOCS_CSP);
    expect(res.text).toContain('/docs/assets/swagger-ui.css');
    expect(res.text).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(res.text).toContain('/docs/assets/init.js');
    expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    expect(res.text).not.toMatch(/https?:\/\//); // no CDN
    for (const code of ERROR_CODES) expect(res.text).toContain(code); // the script-less fallback lists every code
  });

  test('every asset the page references is served', async () => {
    const page = (await request(app).get('/docs')).text;
    const urls = [...page.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
    expect(urls.length).toBeGreaterThanOrEqual(3);
    for (const url of urls) {
      const res = await request(app).get(url);
      expect({ url, status: res.status }).toEqual({ url, status: 200 });
      expect(res.headers['cache-control']).toBe('public, max-age=86400');
    }
  });

  test('an allowed asset is served with its content type', async () => {
    const bundle = await request(app).get('/docs/assets/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect(bundle.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(bundle.headers['cache-control']).toBe('public, max-age=86400');

    const css = await request(app).get('/docs/assets/swagger-ui.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);

    const init = await request(app).get('/docs/assets/init.js');
    expect(init.status).toBe(200);
    expect(init.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(init.text).toContain("url: '/v1/openapi.json'");
    expect(init.text).toContain("docExpansion: 'list'");
    expect(init.text).toContain('defaultModelsExpandDepth: -1');
    expect(init.text).toContain('supportedSubmitMethods: []');
  });

  test.each([
    '/docs/assets/unknown.js',
    '/docs/assets/index.html',
    '/docs/assets/swagger-ui-bundle.js.map',
    '/docs/assets/..%2F..%2Fpackage.json',
    '/docs/assets/%2e%2e%2fpackage.json',
    '/docs/assets/',
    '/docs/assets',
    '/docs/assets/sub/swagger-ui.css',
    '/docs/assets/SWAGGER-UI.CSS',
    '/docs/',
    '/DOCS',
    '/v1/openapi.json/',
    '/v1/OpenAPI.json',
    '/docs/assets/%ZZ',
    '/docs/assets/swagger-ui%2Ecss',
    '/docs/assets/%',
  ])('%s falls through to the app (404)', async (url) => {
    const res = await request(app).get(url);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: 'Not found.' });
  });

  test('only GET (and its HEAD) is routed', async () => {
    expect((await request(app).post('/v1/openapi.json')).status).toBe(404);
    expect((await request(app).delete('/docs')).status).toBe(404);
    expect((await request(app).head('/docs/assets/swagger-ui.css')).status).toBe(200);
  });

  test('a broken document stops creation with a clear error', () => {
    expect(() => createReferenceRouter({ documentPath: path.join(ROOT, 'no-such-file.yaml') })).toThrow(/cannot read the OpenAPI document/);
  });
});
