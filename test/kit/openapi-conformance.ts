/**
 * Response conformance: checks one answer of the gateway's public surface against
 * `openapi/openapi.yaml`, so the document and the gateway cannot drift apart.
 *
 * For an answer to `METHOD path`, the request path is mapped to the document's path template, then:
 * - a path under `/v1` or `/docs` that matches no template must be answered as an unknown path
 *   (`404 not_found`, the `not_found` response component);
 * - GET uses the template's `get` operation; any other method (HEAD included) must be refused
 *   before the key (`405`, or `404` for a malformed listing id) with the `get` operation's
 *   response for that status, because every operation is GET and the document lists 405 there;
 * - the status must be documented for the operation; every header the response marks `required`
 *   must be present, and every documented header that is present must match its schema;
 * - the `Content-Type` must be one of the response's media types; a JSON body must match the
 *   media type's schema (JSON Schema 2020-12, ajv with formats). Non-JSON bodies (`/docs`, its
 *   assets) are checked for status and content type only; HEAD answers have no body to check.
 *
 * Schemas are compiled once per process, on first use.
 */
import fs from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import YAML from 'yaml';

type Json = Record<string, unknown>;

export const DOCUMENT_FILE = path.resolve(__dirname, '..', '..', 'openapi', 'openapi.yaml');
/** The admin API's document (`GET /admin/openapi.json` on the admin listener). */
export const ADMIN_DOCUMENT_FILE = path.resolve(__dirname, '..', '..', 'openapi', 'admin.yaml');
/** Base URI under which a document is registered with ajv; schemas are compiled as `$ref`s into it. */
const documentId = (file: string): string => `https://listings-gateway.invalid/${path.basename(file, '.yaml')}.json`;
/** The answers this check covers: the public surface described by the document. */
const SURFACE = /^\/(v1|docs)(\/|$|\?)/;
/**
 * Path parameters that may span several segments. OpenAPI templates stop at `/`, but the
 * document says of `/v1/insights/{path}`: "Any sub-path of the insights area (it may contain `/`)".
 */
const MULTI_SEGMENT_PARAMETERS: Readonly<Record<string, string>> = { '/v1/insights/{path}': 'path' };

/**
 * Departures of the gateway from the document that have been reported to the gateway's owner and
 * are not fixed yet. Each one excuses exactly one problem, on the answers its `applies` recognises;
 * every other problem of those answers still fails. Remove an entry once the gateway is fixed.
 */
interface KnownDeparture {
  reported: string;
  applies(answer: ObservedAnswer): boolean;
  problem: RegExp;
}

export const KNOWN_DEPARTURES: readonly KnownDeparture[] = [];

export interface ObservedAnswer {
  method: string;
  /** The request target as sent (path and query, undecoded). */
  path: string;
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as text (empty for HEAD). */
  text: string;
  /** Size of the request line and headers as sent, when known (see UNREADABLE_REQUEST_BYTES). */
  requestHeadBytes?: number;
}

/**
 * Node's default limit on a request's line and headers together. The document says a request over
 * it is answered `400 invalid_parameter` before any other check, whatever its path.
 */
export const UNREADABLE_REQUEST_BYTES = 16 * 1024;

/** True for answers this check covers: request paths under `/v1` or `/docs`. */
export function isDocumentedSurface(requestPath: string): boolean {
  return SURFACE.test(requestPath);
}

interface Located {
  node: Json;
  /** JSON pointer of `node` in the document. */
  pointer: string;
}

interface Template {
  template: string;
  regex: RegExp;
  item: Located;
}

interface Compiled {
  id: string;
  doc: Json;
  templates: Template[];
  ajv: Ajv2020;
  validators: Map<string, ValidateFunction>;
}

const compiledByFile = new Map<string, Compiled>();

const escapePointerSegment = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');
const unescapePointerSegment = (s: string): string => s.replace(/~1/g, '/').replace(/~0/g, '~');
const childPointer = (pointer: string, ...segments: string[]): string => pointer + segments.map((s) => `/${escapePointerSegment(s)}`).join('');

function nodeAt(doc: Json, pointer: string): unknown {
  let node: unknown = doc;
  for (const raw of pointer.split('/').slice(1)) node = (node as Json | undefined)?.[unescapePointerSegment(raw)];
  return node;
}

/** Follows local `$ref`s from `located` to the object they name. */
function deref(doc: Json, located: Located): Located {
  let current = located;
  for (let hops = 0; typeof current.node.$ref === 'string'; hops++) {
    const ref = current.node.$ref;
    if (!ref.startsWith('#/') || hops > 20) throw new Error(`openapi conformance: unsupported $ref ${ref} at ${current.pointer}`);
    const target = nodeAt(doc, ref.slice(1));
    if (!target || typeof target !== 'object') throw new Error(`openapi conformance: unresolved $ref ${ref} at ${current.pointer}`);
    current = { node: target as Json, pointer: ref.slice(1) };
  }
  return current;
}

function templateRegex(template: string): RegExp {
  const multi = MULTI_SEGMENT_PARAMETERS[template];
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) => {
      const m = /^\{([^}]+)\}$/.exec(part);
      if (!m) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return m[1] === multi ? '(.+)' : '([^/]+)';
    })
    .join('');
  return new RegExp(`^${source}$`);
}

function compile(file: string = DOCUMENT_FILE): Compiled {
  const cached = compiledByFile.get(file);
  if (cached) return cached;
  const id = documentId(file);
  const doc = YAML.parse(fs.readFileSync(file, 'utf8')) as Json;
  // strictRequired off: the Error schema's `if`/`then` requires `ip`, which its parent defines.
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, validateFormats: true });
  addFormats(ajv);
  // OpenAPI 3.1 Schema Object keywords beyond JSON Schema 2020-12 (annotations here), and the
  // document's own top-level fields, since ajv compiles the resource that `$ref`s point into.
  ajv.addVocabulary(['discriminator', 'xml', 'externalDocs', 'example']);
  ajv.addVocabulary(['openapi', 'info', 'jsonSchemaDialect', 'servers', 'paths', 'webhooks', 'components', 'security', 'tags']);
  // The whole document as one resource, so `#/components/...` references resolve inside it.
  ajv.addSchema({ ...doc, $id: id }, undefined, undefined, false);
  const templates = Object.entries(doc.paths as Record<string, Json>)
    // Literal templates before templated ones, so `/docs` never loses to a `{param}`.
    .sort(([a], [b]) => Number(a.includes('{')) - Number(b.includes('{')))
    .map(([template, item]) => ({ template, regex: templateRegex(template), item: { node: item, pointer: childPointer('', 'paths', template) } }));
  const compiled = { id, doc, templates, ajv, validators: new Map() };
  compiledByFile.set(file, compiled);
  return compiled;
}

/** The compiled validator of the schema at `pointer` (compiled once per process). */
function validatorAt(c: Compiled, pointer: string): ValidateFunction {
  let validate = c.validators.get(pointer);
  if (!validate) {
    const fragment = pointer.split('/').map((s) => encodeURIComponent(s)).join('/');
    validate = c.ajv.compile({ $ref: `${c.id}#${fragment}` });
    c.validators.set(pointer, validate);
  }
  return validate;
}

const formatErrors = (errors: ErrorObject[] | null | undefined): string =>
  (errors ?? []).map((e) => `${e.instancePath ? `${e.instancePath} ` : ''}${e.message ?? e.keyword}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`).join('; ');

const headerValue = (headers: IncomingHttpHeaders, name: string): string | string[] | undefined => headers[name.toLowerCase()];

/** A header's text as the schema expects it: a number for numeric schemas when it reads as one. */
function headerInstance(value: string, schema: Json): unknown {
  const type = schema.type;
  if ((type === 'integer' || type === 'number') && /^-?[0-9]+(\.[0-9]+)?$/.test(value)) return Number(value);
  return value;
}

/** Which response of the operation documents `status`: exact code, then `4XX`-style range, then `default`. */
function responseFor(responses: Json, status: number): string | undefined {
  const exact = String(status);
  if (exact in responses) return exact;
  const range = `${exact[0]}XX`;
  if (range in responses) return range;
  if ('default' in responses) return 'default';
  return undefined;
}

function checkResponse(c: Compiled, located: Located, answer: ObservedAnswer, where: string): string[] {
  const problems: string[] = [];
  const response = deref(c.doc, located);

  const documentedHeaders = (response.node.headers ?? {}) as Json;
  for (const [name, raw] of Object.entries(documentedHeaders)) {
    if (name.toLowerCase() === 'content-type') continue; // ignored by OpenAPI in response headers
    const header = deref(c.doc, { node: raw as Json, pointer: childPointer(response.pointer, 'headers', name) });
    const value = headerValue(answer.headers, name);
    if (value === undefined) {
      if (header.node.required === true) problems.push(`${where}: required header ${name} is missing`);
      continue;
    }
    if (Array.isArray(value)) {
      problems.push(`${where}: header ${name} sent ${value.length} times`);
      continue;
    }
    if (header.node.schema) {
      const schemaPointer = childPointer(header.pointer, 'schema');
      const schema = deref(c.doc, { node: header.node.schema as Json, pointer: schemaPointer }).node;
      const validate = validatorAt(c, schemaPointer);
      if (!validate(headerInstance(value, schema))) problems.push(`${where}: header ${name}: ${JSON.stringify(value)} ${formatErrors(validate.errors)}`);
    }
  }

  const content = response.node.content as Json | undefined;
  if (!content) return problems;
  const contentType = headerValue(answer.headers, 'content-type');
  const mediaType = typeof contentType === 'string' ? contentType.split(';')[0]!.trim().toLowerCase() : '';
  const key =
    Object.keys(content).find((k) => k.toLowerCase() === mediaType) ??
    Object.keys(content).find((k) => k.endsWith('/*') && mediaType.startsWith(k.slice(0, -1).toLowerCase()));
  if (!key) {
    problems.push(`${where}: Content-Type ${JSON.stringify(contentType ?? null)} is not one of ${Object.keys(content).join(', ')}`);
    return problems;
  }
  const isJson = key === 'application/json' || key.endsWith('+json');
  if (!isJson || answer.method === 'HEAD') return problems;
  const media = content[key] as Json;
  if (!media.schema) return problems;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    problems.push(`${where}: body is not JSON: ${JSON.stringify(answer.text.slice(0, 200))}`);
    return problems;
  }
  const validate = validatorAt(c, childPointer(response.pointer, 'content', key, 'schema'));
  if (!validate(body)) problems.push(`${where}: body ${formatErrors(validate.errors)}; body: ${answer.text.slice(0, 300)}`);
  return problems;
}

/**
 * Everything in which `answer` departs from the document (empty when it conforms). Answers to
 * paths outside `/v1` and `/docs` are not covered and give no problems.
 */
export function conformanceProblems(answer: ObservedAnswer): string[] {
  if (!isDocumentedSurface(answer.path)) return [];
  const excused = KNOWN_DEPARTURES.filter((d) => d.applies(answer));
  return problemsOf(answer).filter((problem) => !excused.some((d) => d.problem.test(problem)));
}

function problemsOf(answer: ObservedAnswer): string[] {
  const c = compile();
  const method = answer.method.toUpperCase();
  const pathOnly = answer.path.split(/[?#]/, 1)[0]!;
  const shownPath = answer.path.length > 200 ? `${answer.path.slice(0, 200)}… (${answer.path.length} characters)` : answer.path;
  const where = `${method} ${shownPath} → ${answer.status}`;

  if (answer.status === 400 && (answer.requestHeadBytes ?? 0) > UNREADABLE_REQUEST_BYTES) {
    const pointer = '/components/responses/invalid_parameter';
    return checkResponse(c, { node: { $ref: `#${pointer}` }, pointer }, answer, `${where} (a request over ${UNREADABLE_REQUEST_BYTES} bytes)`);
  }

  const match = c.templates.find((t) => t.regex.test(pathOnly));
  if (!match) {
    // Not a documented path: the interface answers any unknown path with 404 not_found.
    if (answer.status !== 404) return [`${where}: the path matches no path of the document, so the answer must be 404 not_found`];
    const pointer = '/components/responses/not_found';
    return checkResponse(c, { node: { $ref: `#${pointer}` }, pointer }, answer, `${where} (unknown path)`);
  }

  const operationName = method.toLowerCase();
  const documented = operationName in match.item.node;
  const op = (documented ? operationName : 'get') as string;
  const operation = match.item.node[op] as Json | undefined;
  if (!operation) return [`${where}: ${match.template} has no GET operation`];
  if (!documented && answer.status !== 405 && answer.status !== 404) {
    return [`${where}: ${method} is not an operation of ${match.template}, so the answer must be 405 method_not_allowed (or 404 for a malformed path)`];
  }
  const responses = operation.responses as Json;
  const status = responseFor(responses, answer.status);
  if (!status) return [`${where}: status ${answer.status} is not documented for GET ${match.template} (documented: ${Object.keys(responses).join(', ')})`];
  const pointer = childPointer(match.item.pointer, op, 'responses', status);
  return checkResponse(c, { node: responses[status] as Json, pointer }, answer, `${where} (GET ${match.template} ${status})`);
}


/** True for answers the admin document covers: request paths under `/admin`. */
export const isAdminSurface = (requestPath: string): boolean => /^\/admin(\/|$|\?)/.test(requestPath);

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * Everything in which an answer of the admin listener departs from `openapi/admin.yaml` (empty
 * when it conforms). The admin API checks the token before routing, so a 401 on any path is
 * checked against the `unauthenticated` response; a path of no template must be 404; a method
 * the path does not document must be 405 with `Allow` naming exactly the documented methods.
 */
export function adminConformanceProblems(answer: ObservedAnswer): string[] {
  if (!isAdminSurface(answer.path)) return [];
  const c = compile(ADMIN_DOCUMENT_FILE);
  const method = answer.method.toUpperCase();
  const pathOnly = answer.path.split(/[?#]/, 1)[0]!;
  const where = `${method} ${answer.path.slice(0, 200)} → ${answer.status}`;
  const component = (name: string, note: string): string[] => {
    const pointer = `/components/responses/${name}`;
    return checkResponse(c, { node: { $ref: `#${pointer}` }, pointer }, answer, `${where} (${note})`);
  };
  const match = c.templates.find((t) => t.regex.test(pathOnly));
  const operation = match?.item.node[method.toLowerCase()] as Json | undefined;
  if (answer.status === 401 && !(operation && '401' in (operation.responses as Json))) {
    if (operation && (operation.security as unknown[] | undefined)?.length === 0) return [`${where}: ${match!.template} needs no token, so it is never 401`];
    return component('unauthenticated', 'token checked before routing');
  }
  if (!match) {
    if (answer.status !== 404) return [`${where}: the path matches no path of the admin document, so the answer must be 404 not_found`];
    return component('not_found', 'unknown path');
  }
  if (!operation) {
    if (answer.status !== 405) return [`${where}: ${method} is not an operation of ${match.template}, so the answer must be 405 method_not_allowed`];
    const documented = HTTP_METHODS.filter((m) => m in match.item.node).map((m) => m.toUpperCase());
    const allow = String(answer.headers.allow ?? '').split(',').map((m) => m.trim()).filter(Boolean);
    const problems = component('method_not_allowed', `not an operation of ${match.template}`);
    if ([...allow].sort().join() !== [...documented].sort().join()) problems.push(`${where}: Allow "${allow.join(', ')}" is not the documented methods ${documented.join(', ')}`);
    return problems;
  }
  const responses = operation.responses as Json;
  const status = responseFor(responses, answer.status);
  if (!status) return [`${where}: status ${answer.status} is not documented for ${method} ${match.template} (documented: ${Object.keys(responses).join(', ')})`];
  const pointer = childPointer(match.item.pointer, method.toLowerCase(), 'responses', status);
  return checkResponse(c, { node: responses[status] as Json, pointer }, answer, `${where} (${method} ${match.template} ${status})`);
}

/**
 * A `fetch` for the admin listener that checks every answer against the admin document and throws
 * a ConformanceError at once on a departure (tests of the admin API use it for every call).
 */
export function adminConformingFetch(base: typeof fetch = globalThis.fetch): typeof fetch {
  return (async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> => {
    const response = await base(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const text = await response.clone().text();
    const headers: IncomingHttpHeaders = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    const problems = adminConformanceProblems({ method, path: url.pathname + url.search, status: response.status, headers, text });
    if (problems.length) throw new ConformanceError(problems, 'openapi/admin.yaml');
    return response;
  }) as typeof fetch;
}

export class ConformanceError extends Error {
  constructor(readonly problems: string[], document = 'openapi/openapi.yaml') {
    super(`the answer does not conform to ${document}:\n  ${problems.join('\n  ')}`);
    this.name = 'ConformanceError';
  }
}

/** Throws a ConformanceError listing every problem when `answer` departs from the document. */
export function assertConforms(answer: ObservedAnswer): void {
  const problems = conformanceProblems(answer);
  if (problems.length) throw new ConformanceError(problems);
}

/**
 * A `fetch` that checks every answer from `origin` (a gateway's public base URL) against the
 * document, for code that talks to the gateway with fetch (the typed client) rather than the
 * kit's `send()`. Problems are collected in `problems`, not thrown, so the caller's own error
 * handling (retries) is not disturbed: assert that the list is empty.
 */
export function conformingFetch(origin: string, base: typeof fetch = globalThis.fetch): { fetch: typeof fetch; problems: string[]; answers: number } {
  const state = { problems: [] as string[], answers: 0 };
  const wrapped = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> => {
    const response = await base(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.origin !== new URL(origin).origin) return response;
    state.answers++;
    const text = await response.clone().text();
    const headers: IncomingHttpHeaders = {};
    response.headers.forEach((value, name) => { headers[name] = value; });
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    state.problems.push(...conformanceProblems({ method, path: url.pathname + url.search, status: response.status, headers, text }));
    return response;
  };
  return Object.assign(state, { fetch: wrapped as typeof fetch });
}
