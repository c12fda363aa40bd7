import ipaddr from 'ipaddr.js';
import { systemClock, type Clock } from '../clock';

/**
 * The unauthenticated budget's table: refused authentications charged per address and UTC minute,
 * in memory, per instance. Each address is charged at the finest scope that has room, so the table
 * is bounded and the budget never switches off:
 *
 * 1. the address (an IPv6 address by its /64: one host usually holds a whole /64), while fewer than
 *    `tracked` addresses are charged this minute;
 * 2. then its network (IPv4 /24, IPv6 /48), while fewer than `tracked` networks are;
 * 3. then one budget shared by every address not charged at a finer scope.
 *
 * Each scope has the same budget. So at most 2 × `tracked` entries are held; past a full table, a
 * fresh address shares its network's budget (and, past both, everyone's). The valid path pays one
 * `size` check while nothing is charged, a `Map.get` otherwise.
 */
export interface RefusedAuthBudget {
  /** Seconds until the address may try again, or 0 when it is within its budget. */
  waitFor(ip: string, nowMs?: number): number;
  /** Charges one refused authentication to the address (at the finest scope with room). */
  charge(ip: string, nowMs?: number): void;
  /** Refused authentications allowed per address (or network, or everyone) and minute (0: off). */
  readonly perMinute: number;
  /** Most addresses (and most networks) charged per minute. */
  readonly tracked: number;
  /** Hot reload: a new budget (0: off) and table size; the charges are forgotten. */
  update(perMinute: number, tracked?: number): void;
}

/** Addresses (and networks) charged per minute when the config says nothing. */
export const DEFAULT_REFUSED_AUTH_TRACKED = 100_000;
const MINUTE_MS = 60_000;

const ipv6Prefix = (ip: string, groups: number): string | undefined => {
  try {
    return `${ipaddr.IPv6.parse(ip).toNormalizedString().split(':').slice(0, groups).join(':')}::/${groups * 16}`;
  } catch {
    return undefined;
  }
};

/** The address scope: an IPv4 address, or an IPv6 address's /64. */
function addressUnit(ip: string): string {
  return ip.includes(':') ? (ipv6Prefix(ip, 4) ?? ip) : ip;
}

/** The network scope: an IPv4 address's /24, or an IPv6 address's /48. */
function networkUnit(ip: string): string {
  if (ip.includes(':')) return ipv6Prefix(ip, 3) ?? ip;
  const dot = ip.lastIndexOf('.');
  return dot < 0 ? ip : `${ip.slice(0, dot)}.0/24`;
}

const SCOPES = [addressUnit, networkUnit] as const;

/** `clock` decides the minute of a charge or a question that names no instant (default: the system clock). */
export function createRefusedAuthBudget(initialPerMinute: number, initialTracked = DEFAULT_REFUSED_AUTH_TRACKED, clock: Clock = systemClock): RefusedAuthBudget {
  let perMinute = initialPerMinute;
  let tracked = initialTracked;
  let minute = 0;
  const tables = SCOPES.map(() => new Map<string, number>());
  /** Charges of addresses no finer scope had room for. */
  let shared = 0;

  const roll = (nowMs: number): void => {
    const current = nowMs - (nowMs % MINUTE_MS);
    if (current !== minute) {
      minute = current;
      forget();
    }
  };
  const forget = (): void => {
    for (const table of tables) table.clear();
    shared = 0;
  };
  /** Charges so far to the scope the address is charged at (0 for none). */
  const used = (ip: string): number => {
    for (let i = 0; i < SCOPES.length; i++) {
      const table = tables[i]!;
      const count = table.get(SCOPES[i]!(ip));
      if (count !== undefined) return count;
      // The table had room all minute (it only grows), so no coarser scope holds this address.
      if (table.size < tracked) return 0;
    }
    return shared;
  };

  return {
    waitFor(ip, nowMs = clock.now()) {
      if (perMinute === 0 || tables[0]!.size === 0) return 0;
      roll(nowMs);
      return used(ip) >= perMinute ? Math.max(1, Math.ceil((minute + MINUTE_MS - nowMs) / 1000)) : 0;
    },
    charge(ip, nowMs = clock.now()) {
      if (perMinute === 0) return;
      roll(nowMs);
      for (let i = 0; i < SCOPES.length; i++) {
        const table = tables[i]!;
        const unit = SCOPES[i]!(ip);
        const count = table.get(unit);
        if (count !== undefined || table.size < tracked) {
          table.set(unit, (count ?? 0) + 1);
          return;
        }
      }
      shared++;
    },
    get perMinute() {
      return perMinute;
    },
    get tracked() {
      return tracked;
    },
    update(nextPerMinute, nextTracked = tracked) {
      perMinute = nextPerMinute;
      tracked = nextTracked;
      forget();
    },
  };
}
