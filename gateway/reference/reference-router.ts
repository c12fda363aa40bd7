// gateway/reference/: the public reference: /v1/openapi.json and /docs, from openapi/openapi.yaml.
// Served with its precompressed variants.
/**
 * The public reference material: the OpenAPI document (`GET /v1/openapi.json`) and a
 * human-readable page rendering it with Swagger UI (`GET /docs`), served from node_modules
 * (no CDN, no inline script, so a strict Content-Security-Policy holds).
 *
 * Only GET routes are registered here; the app answers 405 on these paths for other methods
 * (see `REFERENCE_PATHS`) and 404 for anything the router does not serve (it calls `next()`).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import express from 'express';
import { CORE_SCHEMA, load } from 'js-yaml';
import { findRepoRoot } from '../repo-root';
import { StaticVariants } from '../compression/static-variants';
import { referenceContexts } from '../pipeline';

/** The express path patterns served by the reference router (the app answers 405 on them). */
export const REFERENCE_PATHS: string[] = ['/v1/openapi.json', '/docs', '/docs/assets/:file'];

/** Content-Security-Policy of the reference page: everything comes from this service. */
export const DOCS_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'";

const DOCUMENT_RELATIVE_PATH = path.join('openapi', 'openapi.yaml');
const ASSETS_PREFIX = '/docs/assets/';
const DOCUMENT_CACHE_CONTROL = 'public, max-age=300';
const ASSET_CACHE_CONTROL = 'public, max-age=86400';

/** Reads and parses the OpenAPI document (YAML) into a plain object. */
export function loadOpenApiDocument(file: string = path.join(findRepoRoot(), DOCUMENT_RELATIVE_PATH)): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the OpenAPI document ${file}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    // js-yaml, as for the config files: the same document as the `yaml` package gives, in a fifth of
    // the time, and one YAML library less to load at start-up.
    doc = load(text, { schema: CORE_SCHEMA, filename: file });
  } catch (err) {
    throw new Error(`invalid OpenAPI document ${file}: ${(err as Error).message}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc) || typeof (doc as Record<string, unknown>).openapi !== 'string') {
    throw new Error(`invalid OpenAPI document ${file}: not an OpenAPI object`);
  }
  return doc as Record<string, unknown>;
}

/** Directory of the swagger-ui-dist package (without loading its 1.7 MB browser bundle into Node). */
function swaggerUiDir(): string {
  return path.dirname(require.resolve('swagger-ui-dist/absolute-path.js'));
}

const INIT_JS = `'use strict';
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/v1/openapi.json',
    dom_id: '#swagger-ui',
    layout: 'BaseLayout',
    presets: [SwaggerUIBundle.presets.apis],
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: -1,
    supportedSubmitMethods: [],
    validatorUrl: null,
    displayRequestDuration: false,
    tryItOutEnabled: false
  });
});
`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** The page: Swagger UI from /docs/assets, plus a script-less fallback naming the endpoints. */
function renderDocsPage(doc: Record<string, unknown>): string {
  const info = (doc.info ?? {}) as { title?: unknown; version?: unknown; description?: unknown };
  const title = typeof info.title === 'string' ? info.title : 'API reference';
  const version = typeof info.version === 'string' ? info.version : '';
  const description = typeof info.description === 'string' ? info.description : '';
  const operations: string[] = [];
  for (const [p, item] of Object.entries((doc.paths ?? {}) as Record<string, Record<string, unknown>>)) {
    for (const [method, op] of Object.entries(item ?? {})) {
      if (!['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].includes(method)) continue;
      const summary = (op as { summary?: unknown } | null)?.summary;
      operations.push(`<li><code>${method.toUpperCase()} ${escapeHtml(p)}</code>${typeof summary === 'string' ? ` — ${escapeHtml(summary)}` : ''}</li>`);
    }
  }
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} — reference</title>
<link rel="icon" type="image/png" sizes="32x32" href="/docs/assets/favicon-32x32.png">
<link rel="icon" type="image/png" sizes="16x16" href="/docs/assets/favicon-16x16.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui">
<noscript>
<h1>${escapeHtml(title)}${version ? ` ${escapeHtml(version)}` : ''}</h1>
<p>This page needs JavaScript to render the interface. The machine-readable description is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</p>
<ul>
${operations.join('\n')}
</ul>
<pre>${escapeHtml(description)}</pre>
</noscript>
</div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;
}

/** A file of the page, held in memory: read once at start-up, with its strong validator and compressed forms. */
interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
  readonly variants: StaticVariants;
}

const asset = (body: Buffer, type: string): Asset => ({ body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`, variants: new StaticVariants(body) });

/**
 * A compressed form's validator: the asset's, weak (as nginx does), since the forms are
 * equivalent but not byte-for-byte the same; a revalidation (weak comparison) matches either form.
 */
const variantEtag = (etag: string, coding: string): string => (coding === 'identity' ? etag : `W/${etag}`);

/**
 * Sends a fixed body, compressed as the caller's Accept-Encoding allows (StaticVariants), with
 * `Vary: Accept-Encoding`; the access line gets the coding and both sizes.
 */
function sendVariant(req: express.Request, res: express.Response, found: Asset, etag?: string): void {
  const variant = found.variants.pick(req.headers['accept-encoding']);
  res.set('Vary', 'Accept-Encoding');
  if (etag) {
    const tag = variantEtag(etag, variant.coding);
    res.set('ETag', tag);
    if (matchesEtag(req.headers['if-none-match'], tag)) {
      res.status(304).end();
      return;
    }
  }
  if (variant.coding !== 'identity') res.set('Content-Encoding', variant.coding);
  const ctx = referenceContexts.get(req);
  if (ctx) ctx.encoded = { encoding: variant.coding, bytes: found.body.length, sentBytes: variant.bytes.length };
  res.type(found.type);
  res.set('Content-Length', String(variant.bytes.length));
  res.end(variant.bytes);
}

function readAsset(file: string, type: string): Asset {
  try {
    return asset(fs.readFileSync(file), type);
  } catch (err) {
    throw new Error(`swagger-ui-dist asset missing: ${file} (${(err as Error).message})`);
  }
}

/** An entity tag without its weakness indicator, for the weak comparison. */
const opaque = (tag: string): string => (tag.startsWith('W/') ? tag.slice(2) : tag);

/** True when an If-None-Match header names this ETag (weak comparison, as RFC 9110 asks for GET) or is `*`. */
function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || opaque(t) === opaque(etag);
  });
}

/**
 * Builds the router. The document is read, parsed and serialised once, here: a broken document
 * stops start-up instead of failing the first request.
 */
export function createReferenceRouter(options: { documentPath?: string } = {}): express.Router {
  const doc = loadOpenApiDocument(options.documentPath);
  const json = JSON.stringify(doc);
  const page = renderDocsPage(doc);
  const uiDir = swaggerUiDir();

  // Read once, here: an answer is a reference to one shared buffer, so no descriptor is opened per
  // request and an answer queued behind others (pipelining) holds no file open (res.sendFile did).
  const assets = new Map<string, Asset>([
    ['swagger-ui.css', readAsset(path.join(uiDir, 'swagger-ui.css'), 'text/css; charset=utf-8')],
    ['swagger-ui-bundle.js', readAsset(path.join(uiDir, 'swagger-ui-bundle.js'), 'text/javascript; charset=utf-8')],
    ['favicon-32x32.png', readAsset(path.join(uiDir, 'favicon-32x32.png'), 'image/png')],
    ['favicon-16x16.png', readAsset(path.join(uiDir, 'favicon-16x16.png'), 'image/png')],
    ['init.js', asset(Buffer.from(INIT_JS), 'text/javascript; charset=utf-8')],
  ]);

  // Exact paths only, like the app: `/docs/` and `/DOCS` are not the surface.
  const router = express.Router({ caseSensitive: true, strict: true });

  const document = asset(Buffer.from(json), 'application/json; charset=utf-8');
  const docsPage = asset(Buffer.from(page), 'text/html; charset=utf-8');

  router.get('/v1/openapi.json', (req, res) => {
    res.set('Cache-Control', DOCUMENT_CACHE_CONTROL);
    res.set('X-Content-Type-Options', 'nosniff');
    sendVariant(req, res, document);
  });

  router.get('/docs', (req, res) => {
    res.set('Content-Security-Policy', DOCS_CSP);
    res.set('X-Content-Type-Options', 'nosniff');
    res.set('Referrer-Policy', 'no-referrer');
    res.set('Cache-Control', 'no-cache');
    sendVariant(req, res, docsPage);
  });

  // Asset names are matched exactly as sent, never percent-decoded: any other name, however it is
  // encoded (`%ZZ` included), falls through to the app's 404. An express `:file` parameter would be
  // decoded first, and a malformed escape would become an error page instead of the catalogue's 404.
  router.use(function serveAsset(req, res, next) {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !req.path.startsWith(ASSETS_PREFIX)) {
      next();
      return;
    }
    const found = assets.get(req.path.slice(ASSETS_PREFIX.length));
    if (!found) {
      next();
      return;
    }
    res.set('Cache-Control', ASSET_CACHE_CONTROL);
    res.set('X-Content-Type-Options', 'nosniff');
    sendVariant(req, res, found, found.etag);
  });

  return router;
}
