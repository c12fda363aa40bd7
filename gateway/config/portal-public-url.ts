import { ConfigError } from './config-error';

/**
 * `PORTAL_PUBLIC_URL`: the address holders reach the portal at (docs/portal.md), e.g.
 * https://portal.example.com; one-time links are printed under it. Undefined when unset; a value
 * that is not an http(s) URL is a one-line `ConfigError`. The trailing slash is dropped.
 */
export function portalPublicUrl(source: NodeJS.ProcessEnv = process.env): string | undefined {
  const raw = source.PORTAL_PUBLIC_URL;
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('environment variable PORTAL_PUBLIC_URL: must be an http or https URL, e.g. https://portal.example.com');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('environment variable PORTAL_PUBLIC_URL: must be an http or https URL, e.g. https://portal.example.com');
  return raw.replace(/\/+$/, '');
}
