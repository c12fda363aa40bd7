import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { demoStripeEnv } from './billing-demo-env';

/**
 * `npm start`: the listings data service and the gateway, embedded defaults, in one terminal.
 * The gateway starts once the data service is listening; when either exits, both stop.
 */
const dist = path.resolve(__dirname, '..');
const backendPort = process.env.BACKEND_PORT ?? '8081';
const children: ChildProcess[] = [];
let stopping = false;

function stopAll(code: number): void {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 11_000).unref();
  Promise.all(children.map((c) => (c.exitCode !== null ? Promise.resolve() : new Promise((r) => c.once('exit', r))))).then(() => process.exit(code));
}

function start(script: string, env: NodeJS.ProcessEnv, onListening?: () => void): ChildProcess {
  const child = spawn(process.execPath, [path.join(dist, script)], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let buffered = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    process.stdout.write(chunk);
    if (!onListening) return;
    buffered += chunk;
    if (buffered.includes('"msg":"listening"')) {
      const ready = onListening;
      onListening = undefined;
      ready();
    }
  });
  child.on('exit', (code) => stopAll(code ?? 1));
  return child;
}

start('backend-mock/main.js', { ...process.env, BACKEND_PORT: backendPort }, () => {
  // The ops listener is on for the demo (loopback): /metrics, /healthz, /readyz on OPS_PORT.
  // The demo keys come from their own file (their values are in the README), never from the
  // production keys file the gateway reads by default.
  // The key holders' portal is on for the demo (loopback, read-only over the demo file): the
  // gateway prints a one-time sign-in link for the demo account.
  // With the Redis key store (KEY_STORE=redis), Stripe's demo is on too: the providers' listener on
  // 8084 with a demo secret, for `npm run demo:billing` (docs/payments-stripe.md).
  const portalPort = process.env.PORTAL_PORT ?? '8083';
  start('gateway/main.js', {
    BACKEND_URL: `http://127.0.0.1:${backendPort}`, OPS_PORT: '9091', KEYS_FILE: 'config/demo-keys.yaml',
    PORTAL_PORT: portalPort, PORTAL_PUBLIC_URL: `http://127.0.0.1:${portalPort}`, PORTAL_DEMO_LINK_ACCOUNT: 'demo-holder',
    ...(process.env.KEY_STORE === 'redis' ? demoStripeEnv() : {}),
    ...process.env,
  });
});
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));
