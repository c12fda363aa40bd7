import { Agent, request } from 'undici';
import type { SignedDelivery } from './signer';

export type DeliveryResult = { readonly ok: true; readonly status: number } | { readonly ok: false; readonly error: string };

/**
 * POSTs one signed event to the receiver. Success is any 2xx; anything else (other statuses,
 * refused or reset connections, no answer within `timeoutMs`) is a failure to retry. Redirects are
 * not followed. The answer's body is read and dropped, at most 64 KB of it, so a receiver cannot
 * make the gateway hold memory; the agent caps the connections a slow receiver can take.
 */
export function createDeliverer(url: string, timeoutMs: number, maxConnections: number) {
  const agent = new Agent({ connections: maxConnections, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 10_000 });
  return {
    async deliver(signed: SignedDelivery): Promise<DeliveryResult> {
      try {
        const res = await request(url, {
          method: 'POST',
          headers: signed.headers,
          body: signed.body,
          dispatcher: agent,
          signal: AbortSignal.timeout(timeoutMs),
        });
        await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
        return res.statusCode >= 200 && res.statusCode < 300 ? { ok: true, status: res.statusCode } : { ok: false, error: `status ${res.statusCode}` };
      } catch (err) {
        return { ok: false, error: (err as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : ((err as { code?: string }).code ?? (err as Error).message) };
      }
    },
    close: (): Promise<void> => agent.close(),
  };
}

export type Deliverer = ReturnType<typeof createDeliverer>;
