/**
 * A small HTTP client for the suites: one request per fresh connection, the path sent exactly as
 * given, a chosen local address or host, repeated headers; answers from a gateway's public port
 * are checked against the OpenAPI document (answer-conformance.ts).
 */
import zlib from 'node:zlib';
import http, { type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { zstd } from '../../gateway/compression/zstd';
import { ConformanceError, recordConformance } from './answer-conformance';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface SendOptions {
  method?: string;
  /** An array value sends the header once per element (e.g. two `x-api-key` lines). */
  headers?: OutgoingHttpHeaders;
  /** Local address to connect from (127.0.0.2 and 127.0.0.1 are both loopback on Linux). */
  localAddress?: string;
  /** Host to connect to instead of the base URL's (e.g. '::1'). */
  host?: string;
  timeoutMs?: number;
}

function parseJson(contentType: string | undefined, text: string): unknown {
  if (!/^application\/json/i.test(contentType ?? '')) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * One request on a fresh connection. `path` is sent exactly as given (no normalisation), so
 * `%2e%2e` or odd query strings reach the gateway untouched. An answer from a gateway's public
 * port to a path under `/v1` or `/docs` that departs from openapi/openapi.yaml rejects with a
 * ConformanceError naming every difference.
 */
/** An answer's body as the gateway meant it: node:http does not decode a Content-Encoding (the gateway compresses when asked). */
function decodedBody(raw: Buffer, coding: string | undefined): Buffer {
  if (coding === 'gzip') return zlib.gunzipSync(raw);
  if (coding === 'br') return zlib.brotliDecompressSync(raw);
  if (coding === 'zstd') return zstd.zstdDecompressSync!(raw);
  return raw;
}

export function send(baseUrl: string, requestPath: string, options: SendOptions = {}): Promise<Answer> {
  const base = new URL(baseUrl);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const method = options.method ?? 'GET';
  return new Promise<Answer>((resolve, reject) => {
    const req = http.request(
      {
        host: options.host ?? base.hostname.replace(/^\[|\]$/g, ''),
        port: Number(base.port),
        method,
        path: requestPath,
        headers: options.headers,
        agent: false,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          clearTimeout(timer);
          let text: string;
          try {
            text = decodedBody(Buffer.concat(chunks), res.headers['content-encoding']).toString('utf8');
          } catch (err) {
            reject(err);
            return;
          }
          const answer: Answer = { status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, text, body: parseJson(res.headers['content-type'], text) };
          let problems: string[];
          try {
            problems = recordConformance({ port: Number(base.port), method, path: requestPath, requestHeaders: options.headers, status: answer.status, headers: answer.headers, text });
          } catch (err) {
            reject(err);
            return;
          }
          if (problems.length) reject(new ConformanceError(problems));
          else resolve(answer);
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${timeoutMs} ms: ${method} ${requestPath}`));
    }, timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}

/** GET with a key (by value). */
export const getWithKey = (baseUrl: string, requestPath: string, keyValue: string, options: SendOptions = {}): Promise<Answer> =>
  send(baseUrl, requestPath, { ...options, headers: { 'x-api-key': keyValue, ...options.headers } });
