/**
 * Calling a test gateway's admin API: one bearer-token call whose answer is checked against
 * openapi/admin.yaml, and the wait for the admin API's Redis connection (it answers 503 until
 * that connection is up, having no offline queue).
 */
import { announcedUrl } from './log-lines';
import { adminConformingFetch } from './openapi-conformance';
import type { RunningProcess } from './processes';
import { eventually } from './timing';

/** Every answer is checked against openapi/admin.yaml (a departure throws a ConformanceError). */
export const adminFetch = adminConformingFetch();

export interface AdminAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body; undefined for an empty body. */
  body: any;
}

/** `method url` on the admin listener at `baseUrl` with `token`, `body` sent as JSON when given. */
export async function adminCall(baseUrl: string, token: string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<AdminAnswer> {
  const r = await adminFetch(`${baseUrl}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, text, body: text && /json/.test(r.headers.get('content-type') ?? '') ? JSON.parse(text) : undefined };
}

/** Waits until `GET /admin/keys` answers 200 with `token`; throws, naming the last answer, after `timeoutMs`. */
export async function waitForAdminStore(baseUrl: string, token: string, timeoutMs = 20_000): Promise<void> {
  let last = '';
  await eventually('the admin API answering 200', async () => {
    const answer = await adminCall(baseUrl, token, 'GET', '/admin/keys?limit=1');
    last = `${answer.status} ${answer.text}`;
    return answer.status === 200;
  }, { timeoutMs }).catch((err: Error) => {
    throw new Error(`${err.message}; last answer: ${last}`);
  });
}

/**
 * The admin listener's URL, announced by `p`, once its key store answers: the admin API answers
 * 503 until its own Redis connection is up (no offline queue).
 */
export async function readyAdminUrl(p: RunningProcess, token: string, timeoutMs?: number): Promise<string> {
  const url = await announcedUrl(p, 'admin api listening');
  await waitForAdminStore(url, token, timeoutMs);
  return url;
}
