/**
 * Response conformance: every answer `send()` gets from a gateway's public port, to a path under
 * `/v1` or `/docs`, is checked against openapi/openapi.yaml (test/kit/openapi-conformance.ts).
 * A test that swallows a rejected `send()` still fails: the problems are reported after it.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { ConformanceError, conformanceProblems } from './openapi-conformance';

const publicGatewayPorts = new Set<number>();
const unconformingThisTest: string[] = [];

/**
 * Checks every answer from this gateway's public port against the document (gateways started by
 * the kit are registered already). Call it for a gateway started by other means.
 */
export function checkAnswersOf<T extends { port: number; child?: { once(event: 'exit', f: () => void): unknown } }>(gateway: T): T {
  publicGatewayPorts.add(gateway.port);
  gateway.child?.once('exit', () => publicGatewayPorts.delete(gateway.port));
  return gateway;
}

if (typeof afterEach === 'function') {
  afterEach(() => {
    const problems = unconformingThisTest.splice(0);
    if (problems.length) throw new ConformanceError(problems);
  });
}

export interface AnsweredRequest {
  port: number;
  method: string;
  path: string;
  requestHeaders: OutgoingHttpHeaders | undefined;
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * The differences from the document of one answer (none when the port is not a registered
 * gateway's); they are also kept to fail the running test even if it swallows the rejection.
 */
export function recordConformance(r: AnsweredRequest): string[] {
  if (!publicGatewayPorts.has(r.port)) return [];
  const requestHeadBytes = Buffer.byteLength(r.path) + Object.entries(r.requestHeaders ?? {}).reduce((n, [k, v]) => n + k.length + Buffer.byteLength(String(v)) + 4, 0);
  const problems = conformanceProblems({ method: r.method, path: r.path, status: r.status, headers: r.headers, text: r.text, requestHeadBytes });
  unconformingThisTest.push(...problems);
  return problems;
}

export { ConformanceError };
