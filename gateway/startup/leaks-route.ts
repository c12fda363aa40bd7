/**
 * GitHub's leaked-key reports on the providers' listener (gateway/leaks/): the key list from
 * LEAKS_GITHUB_KEYS_FILE or LEAKS_GITHUB_KEYS_URL, and the marker of the key store in use (the
 * key admin with Redis; a look-up and a log line with the keys file, which the gateway never writes).
 */
import type { Logger } from 'pino';
import type { LeaksEnv } from '../config/leaks-env';
import { createGithubKeySource } from '../leaks/github-keys';
import { fileStoreMarker, keyAdminMarker } from '../leaks/leak-markers';
import type { HookRoute } from '../hooks/hooks-app';
import { SECRET_SCANNING_PATH, secretScanningHook } from '../leaks/secret-scanning';
import type { KeyAdministration } from './key-administration';
import type { KeyStores } from './key-store';

export function githubLeaksRoute(leaks: LeaksEnv, keys: KeyStores, administration: KeyAdministration | undefined, logger: Logger): HookRoute {
  const source = createGithubKeySource(
    { ...(leaks.keysFile ? { file: leaks.keysFile } : {}), ...(leaks.keysUrl ? { url: leaks.keysUrl } : {}) },
    (err) => logger.warn({ err: err.message, from: leaks.keysFile ? 'LEAKS_GITHUB_KEYS_FILE' : 'LEAKS_GITHUB_KEYS_URL' }, 'GitHub\'s secret scanning keys could not be read'),
  );
  const marker = keys.redisStore && administration ? keyAdminMarker(administration.keyAdmin) : fileStoreMarker(keys.keyStore, logger);
  return { path: SECRET_SCANNING_PATH, provider: 'github', handle: secretScanningHook(source, marker, logger) };
}
