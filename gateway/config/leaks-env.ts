import { z } from 'zod';
import { ConfigError } from './config-error';
import { parseEnvVars } from './env-vars';

/**
 * Where the public keys that sign GitHub's leaked-key reports come from: `LEAKS_GITHUB_KEYS_FILE`
 * (a copy of GitHub's list, for deployments without outbound access), else
 * `LEAKS_GITHUB_KEYS_URL` (default: GitHub's published list).
 */
const LeaksEnvSchema = z.object({
  LEAKS_GITHUB_KEYS_URL: z.string().url('must be an http:// or https:// URL').refine((u) => /^https?:\/\//.test(u), 'must be an http:// or https:// URL').optional(),
  LEAKS_GITHUB_KEYS_FILE: z.string().min(1).optional(),
});

export interface LeaksEnv {
  readonly keysUrl?: string;
  readonly keysFile?: string;
}

/** The key list's variables. Throws a one-line ConfigError. */
export function parseLeaksEnv(source: NodeJS.ProcessEnv = process.env): LeaksEnv {
  const names = ['LEAKS_GITHUB_KEYS_URL', 'LEAKS_GITHUB_KEYS_FILE'];
  const e = parseEnvVars(LeaksEnvSchema, source, (k) => names.includes(k));
  if (e.LEAKS_GITHUB_KEYS_URL && e.LEAKS_GITHUB_KEYS_FILE) {
    throw new ConfigError('environment variable LEAKS_GITHUB_KEYS_FILE: set together with LEAKS_GITHUB_KEYS_URL; set one (the file, without outbound access; else the URL)');
  }
  return Object.freeze({ ...(e.LEAKS_GITHUB_KEYS_URL ? { keysUrl: e.LEAKS_GITHUB_KEYS_URL } : {}), ...(e.LEAKS_GITHUB_KEYS_FILE ? { keysFile: e.LEAKS_GITHUB_KEYS_FILE } : {}) });
}
