import type { KeyAdmin } from '../keys/key-admin';
import type { ApplyChange } from './request-store';

/**
 * An approved change through the key admin: countries are added to the key's (the same key then
 * covers them), a tier replaces the key's. The key admin audits it under the current actor, tells
 * every instance (the key store's change channel) and emits `key.changed`.
 */
export function applyThroughKeyAdmin(admin: Pick<KeyAdmin, 'show' | 'set'>): ApplyChange {
  return async (keyId, change) => {
    if ('tier' in change) {
      await admin.set(keyId, { tier: change.tier });
      return;
    }
    const current = await admin.show(keyId);
    const countries = [...new Set([...current.countries, ...change.countries])];
    if (countries.length !== current.countries.length) await admin.set(keyId, { countries });
  };
}
