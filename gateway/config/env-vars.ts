import type { z } from 'zod';
import { ConfigError } from './config-error';

/**
 * The variables of `source` that `keep` names, checked by `schema`. An empty variable means unset
 * (operators blank a line in an env file to get the default). The first problem throws a one-line
 * ConfigError naming the variable (its value, which may be a secret, is never shown).
 */
export function parseEnvVars<S extends z.ZodType>(schema: S, source: NodeJS.ProcessEnv, keep: (name: string) => boolean): z.output<S> {
  const cleaned = Object.fromEntries(Object.entries(source).filter(([k, v]) => keep(k) && v !== undefined && v !== ''));
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`environment variable ${String(issue.path[0])}: ${issue.message}`);
  }
  return parsed.data;
}
