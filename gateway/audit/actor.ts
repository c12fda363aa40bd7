import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Where a change came from. `library` is a program calling the key admin module itself (the test
 * kit, the benchmark): no operator is behind it, and the audit log says so rather than guessing.
 * `billing` and `leaks` are the gateway's own integrations (a payment provider's events, leaked-key
 * reports), whose actor names the provider and its event (`billing:stripe:<event id>`).
 */
export type Channel = 'cli' | 'admin_api' | 'console' | 'keys_file' | 'library' | 'portal' | 'billing' | 'leaks';

/** Who made a change: an operator token's name (or `cli:<user>@<host>`), and through which channel. */
export interface Actor {
  readonly name: string;
  readonly channel: Channel;
}

const current = new AsyncLocalStorage<Actor>();
const LIBRARY: Actor = { name: 'unknown', channel: 'library' };

/**
 * Runs `work` on behalf of `actor`: every change it makes through the key admin is recorded under
 * that actor. Each channel sets it once at its entrance (the admin API per request, the console per
 * request, the CLI per run), so the key admin needs no actor argument on each method.
 */
export function runAs<T>(actor: Actor, work: () => T): T {
  return current.run(actor, work);
}

export function currentActor(): Actor {
  return current.getStore() ?? LIBRARY;
}
