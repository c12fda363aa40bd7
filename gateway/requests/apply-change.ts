import { ApiError } from '../errors';
import type { KeyAdmin } from '../keys/key-admin';
import type { ApplyChange } from './request-store';

/**
 * An approved change through the key admin: countries are added to the key's (the same key then
 * covers them), a tier replaces the key's. The key admin audits it under the current actor, tells
 * every instance (the key store's change channel) and emits `key.changed`. A key that no longer
 * belongs to the requesting account is not changed (409 `conflict`): it moved since the request.
 */
export function applyThroughKeyAdmin(admin: Pick<KeyAdmin, 'show' | 'set'>): ApplyChange {
  return async (keyId, change, accountId) => {
    const current = await admin.show(keyId);
    if (current.account !== accountId) {
      throw new ApiError('conflict', {}, undefined, `Key "${keyId}" no longer belongs to account "${accountId}": decline the request.`);
    }
    // Checked again in the change's own write: a move or another change between this read and the
    // write is not overwritten (409 or 404; the request stays pending, to be approved again).
    const still = { account: accountId, version: current.updated_at };
    if ('tier' in change) {
      if (current.tier !== change.tier) await admin.set(keyId, { tier: change.tier }, undefined, still);
      return;
    }
    const countries = [...new Set([...current.countries, ...change.countries])];
    if (countries.length !== current.countries.length) await admin.set(keyId, { countries }, undefined, still);
  };
}
