import { readFile } from 'node:fs/promises';
import { createPublicKey, type KeyObject } from 'node:crypto';
import { request } from 'undici';
import { z } from 'zod';

/** GitHub's published public keys for secret scanning reports. */
export const GITHUB_KEYS_URL = 'https://api.github.com/meta/public_keys/secret_scanning';
/** An unknown identifier makes the list be fetched again at most this often (counted from the last attempt). */
export const REFETCH_INTERVAL_MS = 60_000;
/** The key list is small (a few keys); anything larger is not it. */
const MAX_LIST_BYTES = 256 * 1024;

const KeyListSchema = z.object({
  public_keys: z.array(z.object({ key_identifier: z.string().min(1), key: z.string().min(1), is_current: z.boolean().optional() })),
});

/** What the source says of one identifier: its key, none by that identifier, or no list to judge by. */
export type KeyFind = { readonly kind: 'key'; readonly key: KeyObject } | { readonly kind: 'unknown' } | { readonly kind: 'unavailable' };

export interface GithubKeySource {
  find(identifier: string): Promise<KeyFind>;
}

export interface KeySourceOptions {
  /** The list's URL (LEAKS_GITHUB_KEYS_URL); ignored when `file` is set. */
  readonly url?: string;
  /** A file holding the list (LEAKS_GITHUB_KEYS_FILE), for deployments without outbound access; read at each refresh. */
  readonly file?: string;
  /** A fetch unanswered after this long fails. */
  readonly timeoutMs?: number;
  readonly now?: () => number;
}

/** Parses a key list (GitHub's JSON); keys that are not P-256 public keys are left out. Throws when it is not a list. */
export function parseKeyList(text: string): Map<string, KeyObject> {
  const list = KeyListSchema.parse(JSON.parse(text));
  const keys = new Map<string, KeyObject>();
  for (const entry of list.public_keys) {
    try {
      const key = createPublicKey(entry.key);
      if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') keys.set(entry.key_identifier, key);
    } catch {
      // Not a key this gateway can use: the others still are.
    }
  }
  return keys;
}

async function fetchText(url: string, timeoutMs: number): Promise<string> {
  const answer = await request(url, { headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json', 'user-agent': 'listings-gateway' } });
  if (answer.statusCode !== 200) {
    await answer.body.dump();
    throw new Error(`key list answered ${answer.statusCode}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of answer.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_LIST_BYTES) throw new Error('key list too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * GitHub's signing keys, cached. The list is loaded when first needed; an identifier it does not
 * hold makes it be loaded again, at most once per REFETCH_INTERVAL_MS counted from the last
 * attempt (success or not), so a flood of reports naming made-up identifiers costs one fetch a
 * minute. When the last attempt failed, an identifier the list (if any) does not hold cannot be
 * judged (GitHub may have added a key): `unavailable`, the report is refused with 503 and GitHub
 * sends it again.
 */
export function createGithubKeySource(options: KeySourceOptions, onRefreshFailed?: (err: Error) => void): GithubKeySource {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? 5_000;
  let keys: Map<string, KeyObject> | undefined;
  let lastAttempt: number | undefined;
  /** Whether the last attempt read a list: after a failed one, an identifier not held may be a new key (503, not 400). */
  let lastOk = false;
  let inflight: Promise<void> | undefined;

  const load = async (): Promise<string> => (options.file ? readFile(options.file, 'utf8') : fetchText(options.url ?? GITHUB_KEYS_URL, timeoutMs));

  function refresh(): Promise<void> {
    inflight ??= (async () => {
      lastAttempt = now();
      try {
        keys = parseKeyList(await load());
        lastOk = true;
      } catch (err) {
        lastOk = false;
        onRefreshFailed?.(err as Error);
      } finally {
        inflight = undefined;
      }
    })();
    return inflight;
  }

  return {
    async find(identifier) {
      const known = keys?.get(identifier);
      if (known) return { kind: 'key', key: known };
      if (lastAttempt === undefined || now() - lastAttempt >= REFETCH_INTERVAL_MS) await refresh();
      else if (inflight) await inflight;
      const key = keys?.get(identifier);
      if (key) return { kind: 'key', key };
      return lastOk ? { kind: 'unknown' } : { kind: 'unavailable' };
    },
  };
}
