import { ApiError } from '../errors';
import { everyAddressFamilies } from './address-list';
import { addressesOf } from './key-entry';
import type { StoredKey } from './redis-layout';

/**
 * The one place that decides which role a change of a key or an account needs, by what the change
 * does, not by which field it names. `manage` (operator) changes a key's terms; whatever hands a
 * key to someone, ends it, revives it or opens it to every address is an issuing act (admin), as
 * creating, rolling and revoking are:
 * - a key put into an account, or moved to another (that account's holders can roll it in the
 *   portal and receive a live value); taking a key out of an account takes access away: operator;
 * - an address added to an account's `emails` (whoever holds it signs in and can roll the account's
 *   keys); removing an address, or changing the name or the billing id: operator;
 * - an expiry in the past (ends the key), reviving an expired key;
 * - an address list that opens a family the key did not open yet to every address (address-list.ts:
 *   `any`, or ranges admitting more than a /8 of IPv4 or a /32 of IPv6).
 * Returns what the change does that needs the admin role, or undefined when `manage` suffices.
 */
export function keyChangeNeedsAdmin(before: StoredKey, after: StoredKey, nowMs: number): string | undefined {
  const expired = (at: string | undefined): boolean => at !== undefined && Date.parse(at) <= nowMs;
  if (after.expires_at !== before.expires_at && expired(after.expires_at) && !expired(before.expires_at)) return 'ending a key (expires_at in the past)';
  if (expired(before.expires_at) && !expired(after.expires_at)) return 'reviving an expired key';
  if (after.account !== undefined && after.account !== before.account) return 'putting a key into an account (its holders could roll it)';
  const opened = everyAddressFamilies(addressesOf(before));
  const opens = everyAddressFamilies(addressesOf(after)).filter((f) => !opened.includes(f));
  if (opens.length) return `opening a key to every ${opens.join(' and ')} address (any, or ranges wider than a /8 of IPv4 or a /32 of IPv6)`;
  return undefined;
}

/** As keyChangeNeedsAdmin, for an account: an address added to `emails` hands it the account's keys. */
export function accountChangeNeedsAdmin(before: { emails: readonly string[] }, after: { emails: readonly string[] }): string | undefined {
  const added = after.emails.filter((e) => !before.emails.includes(e));
  return added.length ? 'adding an email to an account (its holder could sign in and roll the account\'s keys)' : undefined;
}

/**
 * 403 `forbidden` naming the act, unless the caller may issue (`allows(role, 'issue')`, roles.ts;
 * true for the CLI and the portal, whose own checks stand in for a role).
 */
export function refuseUnlessAdmin(may: { issue: boolean }, act: string | undefined): void {
  if (act === undefined || may.issue) return;
  throw new ApiError('forbidden', {}, undefined, `${act[0]!.toUpperCase()}${act.slice(1)} needs the role "admin".`);
}
