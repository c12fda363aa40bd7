/**
 * Stripe's side of the billing suites: events with Stripe's field names, signed with the `stripe`
 * package's test-header helper, posted to a gateway's providers' listener; a stand-in for Stripe's
 * API (charges, for a dispute's customer); and a receiver of the gateway's own webhooks.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import Stripe from 'stripe';

let sequence = 0;

export interface StripeEvent {
  id: string;
  object: 'event';
  type: string;
  created: number;
  api_version: string;
  livemode: false;
  data: { object: Record<string, unknown> };
}

/** An event as Stripe sends it; `created` in seconds (default now). */
export function stripeEvent(type: string, object: Record<string, unknown>, o: { id?: string; created?: number } = {}): StripeEvent {
  sequence++;
  return {
    id: o.id ?? `evt_test_${process.pid}_${sequence}_${Math.random().toString(36).slice(2, 8)}`,
    object: 'event',
    type,
    created: o.created ?? Math.floor(Date.now() / 1000),
    api_version: '2025-10-29.clover',
    livemode: false,
    data: { object },
  };
}

export const subscription = (customer: string, status: string, lookupKeys: readonly string[] = [], id = `sub_${customer}`) => ({
  id, object: 'subscription', customer, status,
  items: { object: 'list', data: lookupKeys.map((k, i) => ({ id: `si_${id}_${i}`, object: 'subscription_item', price: { id: `price_${k}`, object: 'price', lookup_key: k } })) },
});
export const invoice = (customer: string, billingReason = 'subscription_cycle', id = `in_${customer}_${++sequence}`) => ({
  id, object: 'invoice', customer, billing_reason: billingReason, hosted_invoice_url: `https://invoice.stripe.com/i/acct_test/${id}`,
});
export const dispute = (id: string, charge: string, status: string) => ({ id, object: 'dispute', charge, status });

export interface SignOptions {
  secret: string;
  /** Seconds since the epoch (default now). */
  timestamp?: number;
}

/** Posts `payload` (an event, or raw text) signed as Stripe signs; `tamper` changes the body after signing. */
export async function postSigned(hooksUrl: string, payload: StripeEvent | string, o: SignOptions & { tamper?: (body: string) => string; signature?: string | null }): Promise<{ status: number; body: Record<string, unknown> }> {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const header = o.signature === undefined ? Stripe.webhooks.generateTestHeaderString({ payload: body, secret: o.secret, ...(o.timestamp !== undefined ? { timestamp: o.timestamp } : {}) }) : o.signature;
  const res = await fetch(`${hooksUrl}/hooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(header !== null ? { 'stripe-signature': header } : {}) },
    body: o.tamper ? o.tamper(body) : body,
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { text };
  }
  return { status: res.status, body: parsed };
}

export interface JsonServer {
  url: string;
  received: Array<{ method: string; url: string; body: unknown }>;
  close(): Promise<void>;
}

/** A loopback JSON server: records each request, answers what `answer` says. */
export async function startJsonServer(answer: (method: string, url: string) => { status: number; body: unknown }): Promise<JsonServer> {
  const received: JsonServer['received'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch { /* not JSON: kept as text */ }
      received.push({ method: req.method ?? '', url: req.url ?? '', body });
      const a = answer(req.method ?? '', req.url ?? '');
      res.writeHead(a.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(a.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** A stand-in for Stripe's API: GET /v1/charges/{id} answers the charge with the customer `charges` names, else 404. */
export function stripeApiStandIn(charges: Map<string, string | null>): Promise<JsonServer> {
  return startJsonServer((method, url) => {
    const m = /^\/v1\/charges\/([A-Za-z0-9_]+)/.exec(url);
    if (method !== 'GET' || !m || !charges.has(m[1]!)) {
      return { status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such charge: '${m?.[1] ?? ''}'` } } };
    }
    return { status: 200, body: { id: m[1], object: 'charge', customer: charges.get(m[1]!) } };
  });
}

/**
 * A POST written on a raw socket: the head, then `parts` one after the other while the server reads
 * (write errors after the server closed are ignored); resolves with the answer's status and JSON body.
 * For oversized bodies: a fetch would fail with EPIPE once the server stops reading.
 */
export function rawPost(baseUrl: string, path: string, head: Record<string, string>, parts: readonly Buffer[]): Promise<{ status: number; body: Record<string, unknown> }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const received: Buffer[] = [];
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const text = Buffer.concat(received).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      if (!status) return reject(new Error(`no answer: ${text.slice(0, 200)}`));
      const bodyText = text.slice(text.indexOf('\r\n\r\n') + 4);
      try {
        resolve({ status, body: JSON.parse(bodyText) as Record<string, unknown> });
      } catch {
        resolve({ status, body: { text: bodyText } });
      }
    });
    socket.on('connect', () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n${Object.entries(head).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`);
      let i = 0;
      const next = (): void => {
        if (i >= parts.length || socket.destroyed || !socket.writable) return;
        socket.write(parts[i++]!, () => setImmediate(next));
      };
      next();
    });
  });
}
