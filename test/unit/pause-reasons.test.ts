/**
 * Pause reasons as a set, at the record level: the set form and the single `pause_reason` of older
 * records and files read alike (a set of one), a keys file accepts either (both only when they
 * agree), the status stays consistent with the set, and the refusal's log reason names the reasons.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../gateway/config/config-error';
import { sha256Hex } from '../../gateway/keys/key-format';
import { toKeyRecord } from '../../gateway/keys/key-record-build';
import { keyView } from '../../gateway/keys/key-view';
import { isWellFormedKeyEntry, readKeysFile } from '../../gateway/keys/keys-file';
import { afterSettle } from '../../gateway/keys/key-admin-states';
import { pauseReasonsOf, withPauseReasons } from '../../gateway/keys/pause-reasons';
import { checkKeyState } from '../../gateway/policies/check-key-state';
import type { StoredKey } from '../../gateway/keys/redis-layout';
import type { GatewayConfig } from '../../gateway/config/gateway-config';

const config = { tiers: { standard: { perMinute: 60, perDay: 1000, perMonth: 10000 }, advanced: { perMinute: 600, perDay: 10000, perMonth: 100000 } }, stores: { byCountry: {} } } as unknown as GatewayConfig;
const base = { id: 'k', key_sha256: sha256Hex('v'), tier: 'standard' as const, countries: ['GB'], addresses: ['10.0.0.1'], created_at: 'x', updated_at: 'x' };

describe('the set and the single reason', () => {
  it('reads pause_reasons sorted and once, the single pause_reason as a set of one, nothing as none', () => {
    expect(pauseReasonsOf({ pause_reasons: ['unpaid_renewal', 'leaked', 'unpaid_renewal'] })).toEqual(['leaked', 'unpaid_renewal']);
    expect(pauseReasonsOf({ pause_reason: 'payment_dispute' })).toEqual(['payment_dispute']);
    expect(pauseReasonsOf({})).toEqual([]);
  });

  it('writes the set form with a status that follows it; a revoked record holds no reasons', () => {
    const old: StoredKey = { ...base, status: 'paused', pause_reason: 'unpaid_renewal' };
    expect(withPauseReasons(old, ['payment_dispute', 'unpaid_renewal'])).toEqual({ ...base, status: 'paused', pause_reasons: ['payment_dispute', 'unpaid_renewal'] });
    expect(withPauseReasons(old, [])).toEqual({ ...base, status: 'active' });
    expect(withPauseReasons({ ...base, status: 'active' as const }, ['operator'])).toEqual({ ...base, status: 'paused', pause_reasons: ['operator'] });
    expect(withPauseReasons({ ...old, status: 'revoked' as const }, ['operator'])).toEqual({ ...base, status: 'revoked' });
  });

  it('a settle removes the reason it names, or every reason but leaked', () => {
    expect(afterSettle(['leaked', 'operator', 'payment_dispute', 'unpaid_renewal'], {})).toEqual(['leaked']);
    expect(afterSettle(['payment_dispute', 'unpaid_renewal'], { reason: 'unpaid_renewal' })).toEqual(['payment_dispute']);
    expect(afterSettle(['payment_dispute'], { reason: 'unpaid_renewal' })).toEqual(['payment_dispute']);
  });

  it('views show the sorted set and its first as pause_reason, only while paused', () => {
    expect(keyView({ ...base, status: 'paused', pause_reason: 'payment_dispute' }, config)).toMatchObject({ pause_reasons: ['payment_dispute'], pause_reason: 'payment_dispute' });
    const both = keyView({ ...base, status: 'paused', pause_reasons: ['unpaid_renewal', 'payment_dispute'] }, config);
    expect(both).toMatchObject({ pause_reasons: ['payment_dispute', 'unpaid_renewal'], pause_reason: 'payment_dispute' });
    const active = keyView({ ...base, status: 'active', pause_reason: 'payment_dispute' }, config);
    expect(active).not.toHaveProperty('pause_reasons');
    expect(active).not.toHaveProperty('pause_reason');
  });

  it('the 403 refusal logs every reason; its answer is the usual key_paused', () => {
    const refuse = checkKeyState();
    const refusal = (entry: StoredKey): { code: string; reason?: string } => {
      try {
        refuse({ key: toKeyRecord(entry, config) } as never);
      } catch (err) {
        return err as { code: string; reason?: string };
      }
      throw new Error('not refused');
    };
    expect(refusal({ ...base, status: 'paused', pause_reason: 'unpaid_renewal' })).toMatchObject({ code: 'key_paused', reason: 'paused_unpaid_renewal', message: expect.stringContaining('paused') });
    expect(refusal({ ...base, status: 'paused', pause_reasons: ['unpaid_renewal', 'payment_dispute'] })).toMatchObject({ code: 'key_paused', reason: 'paused_payment_dispute+unpaid_renewal' });
  });
});

describe('keys files accept either form', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pause-reasons-'));
  let n = 0;
  const file = (fields: string): string => {
    const name = path.join(dir, `keys-${n++}.yaml`);
    writeFileSync(name, `keys:\n  - {id: k, key_sha256: ${sha256Hex('v')}, tier: standard, countries: [GB], address: 127.0.0.1, ${fields}}\n`);
    return name;
  };
  const failure = (fields: string): string => {
    try {
      readKeysFile(file(fields));
    } catch (err) {
      if (err instanceof ConfigError) return err.message;
      throw err;
    }
    throw new Error('expected a ConfigError');
  };

  it('pause_reasons (normalised: sorted, once), pause_reason, or both when they agree', () => {
    expect(readKeysFile(file('status: paused, pause_reasons: [unpaid_renewal, leaked, leaked]'))[0]).toMatchObject({ pause_reasons: ['leaked', 'unpaid_renewal'] });
    expect(readKeysFile(file('status: paused, pause_reason: operator'))[0]).toMatchObject({ pause_reason: 'operator' });
    expect(readKeysFile(file('status: paused, pause_reason: leaked, pause_reasons: [leaked, payment_dispute]'))[0]).toMatchObject({ pause_reasons: ['leaked', 'payment_dispute'] });
  });

  it.each([
    ['status: paused', 'field "pause_reason": is required when status is paused'],
    ['status: paused, pause_reasons: []', 'field "pause_reason": is required when status is paused'],
    ['status: active, pause_reasons: [operator]', 'field "pause_reasons": a active key holds no pause reasons'],
    ['status: paused, pause_reason: operator, pause_reasons: [leaked]', 'field "pause_reason": must be one of pause_reasons'],
    ['status: paused, pause_reasons: [bankrupt]', 'field "pause_reasons[0]"'],
    ['status: active, billing_invoice_url: "http://invoice.example/i/1"', 'field "billing_invoice_url": must be an https:// URL'],
  ])('refuses %s, naming the field', (fields, expected) => expect(failure(fields)).toContain(expected));

  it('the fast structural check takes the new fields', () => {
    const entry = { id: 'k', key_sha256: sha256Hex('v'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'paused' };
    expect(isWellFormedKeyEntry({ ...entry, pause_reasons: ['leaked', 'operator'] })).toBe(true);
    expect(isWellFormedKeyEntry({ ...entry, pause_reasons: ['bankrupt'] })).toBe(false);
    expect(isWellFormedKeyEntry({ ...entry, pause_reason: 'leaked', billing_invoice_url: 'https://invoice.example/i/1' })).toBe(true);
    expect(isWellFormedKeyEntry({ ...entry, pause_reason: 'leaked', billing_invoice_url: 'javascript:alert(1)' })).toBe(false);
  });
});
