/**
 * GitHub's side of secret scanning, for the suites: a P-256 key pair made here, its public key in
 * GitHub's key-list format (served by a local HTTP server that counts its fetches and can be made
 * to fail, or written to a file), and reports signed with it and posted to a providers' listener.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { send, type Answer } from './http-send';
import { writeTempFile } from './temp-files';

export const REPORT_PATH = '/hooks/github/secret-scanning';

export interface Signer {
  readonly identifier: string;
  readonly privateKey: KeyObject;
  readonly publicPem: string;
}

export function makeSigner(identifier: string): Signer {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { identifier, privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }) as string };
}

export const keyListJson = (signers: readonly Signer[]): string =>
  JSON.stringify({ public_keys: signers.map((s) => ({ key_identifier: s.identifier, key: s.publicPem, is_current: true })) });

export const keyListFile = (signers: readonly Signer[]): string => writeTempFile('github-keys.json', keyListJson(signers));

/** A local key-list server: `signers` is what it serves (change it to add a key), `failing` answers 500, `fetches` counts requests. */
export interface KeyListServer {
  readonly url: string;
  signers: Signer[];
  failing: boolean;
  fetches: number;
  /** When it was last asked (ms), 0 before. */
  lastFetchAt: number;
  close(): Promise<void>;
}

export async function startKeyListServer(signers: Signer[]): Promise<KeyListServer> {
  const state = { signers, failing: false, fetches: 0, lastFetchAt: 0 };
  const server = http.createServer((_req, res) => {
    state.fetches++;
    state.lastFetchAt = Date.now();
    if (state.failing) return void res.writeHead(500).end('down');
    res.writeHead(200, { 'content-type': 'application/json' }).end(keyListJson(state.signers));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/meta/public_keys/secret_scanning`;
  return Object.assign(state, {
    url,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  });
}

/** One reported match, as GitHub sends it. */
export const match = (token: string, url = 'https://github.com/acme/app/blob/main/.env'): { token: string; type: string; url: string; source: string } => ({ token, type: 'listings_gateway_api_key', url, source: 'content' });

export const signatureOf = (body: Buffer, signer: Signer): string => sign('sha256', body, { key: signer.privateKey, dsaEncoding: 'der' }).toString('base64');

/** Posts `body` (a value: sent as JSON; a Buffer: as is) signed by `signer` (or with `headers` given as they are). */
export function postReport(hooksUrl: string, body: unknown, signer?: Signer, headers: Record<string, string> = {}): Promise<Answer> {
  const raw = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  const signed: Record<string, string> = signer ? { 'github-public-key-identifier': signer.identifier, 'github-public-key-signature': signatureOf(raw, signer) } : {};
  return sendRaw(hooksUrl, raw, { ...signed, ...headers });
}

/** A POST of `raw` to the report path with these headers. */
export function sendRaw(hooksUrl: string, raw: Buffer, headers: Record<string, string>): Promise<Answer> {
  return sendBody(hooksUrl, REPORT_PATH, raw, { 'content-type': 'application/json', ...headers });
}

function sendBody(baseUrl: string, path: string, body: Buffer, headers: Record<string, string>): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const url = new URL(path, baseUrl);
    const req = http.request(url, { method: 'POST', headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try { parsed = JSON.parse(text); } catch { parsed = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, text, body: parsed });
      });
      res.on('error', reject);
    });
    // The listener may answer (400) and close before the whole body is sent.
    req.on('error', reject);
    req.end(body);
  });
}

export { send };
