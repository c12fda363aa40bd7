import { ANY_ADDRESS } from './address-list';
import type { KeyView } from './key-view';
import type { FileKey } from './key-record-build';
import { reasonFields } from './pause-reasons';

/** A keys-file record as operators see it (no hash); the file has no creation or update times. */
export function fileKeyView(key: FileKey): KeyView {
  const r = key.record;
  return {
    id: r.id,
    tier: r.tier,
    countries: [...r.countries],
    addresses: [...r.addressList],
    ...(r.addressList.length === 1 && !r.addressList[0]!.includes('/') && r.addressList[0] !== ANY_ADDRESS ? { address: r.addressList[0] } : {}),
    ...(r.expiresAt !== undefined ? { expires_at: new Date(r.expiresAt).toISOString() } : {}),
    status: r.status,
    ...(r.status === 'paused' ? reasonFields(r.pauseReasons ?? []) : {}),
    limits: { per_minute: r.limits.perMinute, per_day: r.limits.perDay, per_month: r.limits.perMonth },
    ...(key.previous && key.previous.expiresAt > Date.now() ? { previous_key_valid_until: new Date(key.previous.expiresAt).toISOString() } : {}),
    created_at: '',
    updated_at: '',
  };
}

