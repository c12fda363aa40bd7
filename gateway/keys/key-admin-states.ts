import { generateKeyValue, sha256Hex } from './key-format';
import type { KeyAdmin, KeyAdminContext } from './key-admin-types';
import { notAllowed, parseInput, PauseSchema, RollSchema } from './key-input';
import { keyView } from './key-view';
import { rollGrants, withoutLeak } from './key-admin-leaks';
import type { StoredKey } from './redis-layout';

type States = Pick<KeyAdmin, 'pause' | 'settle' | 'revoke' | 'roll'>;

const unlessRevoked = (what: string) => (s: StoredKey): void => {
  if (s.status === 'revoked') throw notAllowed(`A revoked key cannot be ${what}.`);
};

/** The key admin's changes of a key's state: pause, settle, revoke, roll (each committed, audited, announced, then its event sent). */
export function keyAdminStates(ctx: KeyAdminContext): States {
  const { writer, emit } = ctx;
  const view = (s: StoredKey) => keyView(s, ctx.config());
  return {
    async pause(id, reason) {
      const pauseReason = parseInput(PauseSchema, { reason }).reason;
      const paused = view((await writer.update(id, 'pause', (s) => {
        unlessRevoked('paused')(s);
        return { ...s, status: 'paused', pause_reason: pauseReason };
      })).after);
      await emit('key.paused', { key_id: id, status: 'paused', pause_reason: pauseReason });
      return paused;
    },
    async settle(id) {
      const settled = view((await writer.update(id, 'settle', (s) => {
        unlessRevoked('settled')(s);
        const { pause_reason: _r, ...rest } = s;
        return { ...rest, status: 'active' };
      })).after);
      await emit('key.settled', { key_id: id, status: 'active' });
      return settled;
    },
    async revoke(id) {
      const revoked = view((await writer.update(id, 'revoke', (s) => {
        const { pause_reason: _r, previous_key_sha256: _p, previous_expires_at: _e, ...rest } = s;
        return { ...rest, status: 'revoked' };
      })).after);
      await emit('key.revoked', { key_id: id, status: 'revoked' });
      return revoked;
    },
    async roll(id, graceSeconds) {
      const grace = parseInput(RollSchema, { grace_seconds: graceSeconds }).grace_seconds;
      const key = generateKeyValue();
      const { after } = await writer.update(id, 'roll', (s) => {
        unlessRevoked('rolled')(s);
        // A leaked value gets no grace; the roll clears the leak mark.
        const { previous_key_sha256: _p, previous_expires_at: _e, ...rest } = withoutLeak(s);
        return grace > 0 && rollGrants(s)
          ? { ...rest, key_sha256: sha256Hex(key), previous_key_sha256: s.key_sha256, previous_expires_at: Date.now() + grace * 1000 }
          : { ...rest, key_sha256: sha256Hex(key) };
      });
      // The grace end as stored, to the millisecond.
      const until = after.previous_expires_at;
      await emit('key.rolled', { key_id: id, previous_key_valid_until: grace > 0 && until !== undefined ? new Date(until).toISOString() : null });
      return { id, key };
    },
  };
}
