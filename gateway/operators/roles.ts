/**
 * Operator roles and what each may do. One table, read by the admin API and the console alike, so
 * a button the console shows and the call it makes are allowed by the same rule.
 */
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/**
 * What an operator does, grouped by the least role that may do it:
 * - `read`: records, usage, the audit log (viewer);
 * - `manage`: pause, settle, change countries / tier / address / limits (operator);
 * - `issue`: create, roll, revoke, import, delete (admin): the actions that hand out or end a key value.
 */
export type Permission = 'read' | 'manage' | 'issue';

const LEAST_ROLE: Record<Permission, Role> = { read: 'viewer', manage: 'operator', issue: 'admin' };
const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

export function allows(role: Role, permission: Permission): boolean {
  return RANK[role] >= RANK[LEAST_ROLE[permission]];
}

/** The least role needed for a permission (for error messages and the README's table). */
export const leastRole = (permission: Permission): Role => LEAST_ROLE[permission];
