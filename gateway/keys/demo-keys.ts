import ipaddr from 'ipaddr.js';

/**
 * The demo keys: their values are published in the README, so anyone can use them. A key is a demo
 * key when its SHA-256 is one of these, whatever its id or the file it sits in: a demo entry copied
 * into a production keys file, or imported into Redis under another name, is still recognised.
 * `npm start` loads them from their own file, config/demo-keys.yaml (a test holds the two together).
 */
export const DEMO_KEY_HASHES: ReadonlyMap<string, string> = new Map([
  ['247546e72a6cafd7329cafc5e701df1c9696e93a0b2a2f1bcd91e98f63124e3d', 'demo-standard'],
  ['1a9ca2423a1f48db33d6e85d752c8901cbf9ed066e58bc60898e82b4213ce578', 'demo-advanced'],
  ['8748fbb69ccd34fb9bc0b2fc00f3ce27c2f63d1088fca358b10c91b6d9c62e03', 'demo-paused'],
  ['b66ee067fb3bd84c16484c29f386a3bb6e9d6e1a7e5a63e61c2ae3d8c1941f0f', 'demo-revoked'],
  ['4b9266405e4896cbadc4c845b1c7a67e57b75477140ee3410dc3dc20e528bd76', 'demo-elsewhere'],
]);

export const isDemoKey = (keySha256: string): boolean => DEMO_KEY_HASHES.has(keySha256.toLowerCase());

/** True when `host` (a bind address) is reachable from this machine only: a loopback address or `localhost`. */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  const address = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return parsed.range() === 'loopback';
}

/** The warning a gateway listening beyond loopback logs when it serves demo keys (ids only). */
export const demoKeyWarning = (ids: readonly string[], host: string): string =>
  `demo keys loaded while listening on ${host} (not loopback): ${ids.join(', ')}; their values are published in the README: remove them before exposing the gateway`;
