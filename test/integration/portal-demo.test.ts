/**
 * The demo (`npm start`, embedded store): the key holders' portal is on, read-only over
 * config/demo-keys.yaml, and a one-time sign-in link for the demo account is printed.
 */
import { waitForLine } from '../kit/log-lines';
import { csrfIn, portalRequest, sessionCookie, signInWithLink } from '../kit/portal';
import { startProcess, type RunningProcess } from '../kit/processes';
import { freePort } from '../kit/redis-server';

let all: RunningProcess;
let publicUrl: string;
let link: string;

beforeAll(async () => {
  const port = await freePort();
  all = await startProcess('scripts/start-all.js', { BACKEND_PORT: String(await freePort()), PORT: '0', OPS_PORT: '0', PORTAL_PORT: String(port) }, 60_000);
  publicUrl = `http://127.0.0.1:${port}`;
  const line = await waitForLine(all, 'Key holders\' portal: sign in as account "demo-holder"', 30_000);
  link = /(http:\/\/\S+\/portal\/link\/\S+)$/.exec(line)![1]!;
}, 90_000);

afterAll(async () => {
  expect(await all.stop()).toBe(0);
});

test('the printed link signs in once as the demo account, never logged as a log entry', async () => {
  expect(link.startsWith(`${publicUrl}/portal/link/`)).toBe(true);
  const token = link.slice(link.lastIndexOf('/') + 1);
  expect(all.output.filter((l) => l.startsWith('{') && l.includes(token))).toEqual([]);
  const signedIn = await signInWithLink(publicUrl, publicUrl, token);
  expect(signedIn.status).toBe(303);
  expect((await signInWithLink(publicUrl, publicUrl, token)).status).toBe(400);

  const cookie = sessionCookie(signedIn);
  const keys = await portalRequest(publicUrl, '/portal/keys', { cookie });
  expect(keys.status).toBe(200);
  expect(keys.text).toContain('Demo Holder Ltd');
  expect([...keys.text.matchAll(/data-key="([^"]+)"/g)].map((m) => m[1])).toEqual(['demo-paused', 'demo-standard']);

  // Read-only: the page says so, offers no change, and a forged change is refused.
  const page = await portalRequest(publicUrl, '/portal/keys/demo-standard', { cookie });
  expect(page.text).toContain('id="read-only"');
  expect(page.text).not.toMatch(/name="(addresses|countries|tier)"/);
  const forged = await portalRequest(publicUrl, '/portal/keys/demo-standard/addresses', { cookie, origin: publicUrl, form: { _csrf: csrfIn(page.text), addresses: '10.0.0.1' } });
  expect(forged.status).toBe(403);
  expect((await portalRequest(publicUrl, '/portal/keys/demo-advanced', { cookie })).status).toBe(404);
  const paused = await portalRequest(publicUrl, '/portal/keys/demo-paused', { cookie });
  expect(paused.text).toContain('renewal is unpaid');
});
