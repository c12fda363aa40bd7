import crypto, { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createOperatorRegistry, loadOperatorTokens } from '../../gateway/operators/operator-tokens';
import { allows } from '../../gateway/operators/roles';

const sha = (v: string): string => createHash('sha256').update(v).digest('hex');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'op-tokens-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};

describe('roles', () => {
  it.each([
    ['viewer', [true, false, false]],
    ['operator', [true, true, false]],
    ['admin', [true, true, true]],
  ] as const)('%s may read / manage / issue: %j', (role, expected) => {
    expect((['read', 'manage', 'issue'] as const).map((p) => allows(role, p))).toEqual(expected);
  });
});

describe('ADMIN_TOKENS_FILE', () => {
  it('loads names, roles and hashes; the registry finds each token, and ADMIN_TOKEN is an admin named admin', () => {
    const f = file('ok.yaml', `- name: ann\n  token_sha256: ${sha('ann-token-0123456789')}\n  role: viewer\n- name: bob\n  token_sha256: ${sha('bob-token-0123456789').toUpperCase()}\n  role: operator\n`);
    const registry = createOperatorRegistry('env-admin-token-0123', loadOperatorTokens(f, ['admin']));
    expect(registry.authenticate('ann-token-0123456789')).toEqual({ name: 'ann', role: 'viewer' });
    expect(registry.authenticate('bob-token-0123456789')).toEqual({ name: 'bob', role: 'operator' });
    expect(registry.authenticate('env-admin-token-0123')).toEqual({ name: 'admin', role: 'admin' });
    expect(registry.authenticate('nobody')).toBeUndefined();
    expect(registry.authenticate('')).toBeUndefined();
    registry.replace([]);
    expect(registry.authenticate('ann-token-0123456789')).toBeUndefined();
    expect(registry.authenticate('env-admin-token-0123')).toEqual({ name: 'admin', role: 'admin' });
  });

  it.each([
    ['not a list', 'name: ann\n', /: \(top level\): must be a YAML list/],
    ['a bad role', `- name: ann\n  token_sha256: ${sha('a')}\n  role: root\n`, /: entry \[0\] \(name ann\), field role: must be viewer, operator or admin$/],
    ['a short hash', `- name: ann\n  token_sha256: ${sha('a')}\n  role: viewer\n- name: bob\n  token_sha256: abc\n  role: viewer\n`, /: entry \[1\] \(name bob\), field token_sha256: must be the SHA-256/],
    ['an unknown field', `- name: ann\n  token: plain-text-token\n  token_sha256: ${sha('a')}\n  role: viewer\n`, /: entry \[0\] \(name ann\)/],
    ['a repeated name', `- name: ann\n  token_sha256: ${sha('a')}\n  role: viewer\n- name: ann\n  token_sha256: ${sha('b')}\n  role: admin\n`, /entry \[1\] \(name ann\), field name: the name is used by an earlier entry$/],
    ['a repeated token', `- name: ann\n  token_sha256: ${sha('a')}\n  role: viewer\n- name: bob\n  token_sha256: ${sha('a')}\n  role: admin\n`, /entry \[1\] \(name bob\), field token_sha256: the same token/],
    ['ADMIN_TOKEN\'s name', `- name: admin\n  token_sha256: ${sha('a')}\n  role: viewer\n`, /entry \[0\] \(name admin\), field name: "admin" is ADMIN_TOKEN's name$/],
  ])('refuses %s with one line naming the file and the entry', (_label, text, pattern) => {
    const f = file('bad.yaml', text);
    let message = '';
    try {
      loadOperatorTokens(f, ['admin']);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(pattern);
    expect(message.startsWith(f)).toBe(true);
    expect(message).not.toContain('\n');
    expect(message).not.toContain('plain-text-token');
  });

  it('compares digests with timingSafeEqual against every entry, not stopping at a match', () => {
    const entries = loadOperatorTokens(file('three.yaml', ['a', 'b', 'c'].map((n) => `- name: ${n}\n  token_sha256: ${sha(`${n}-token`)}\n  role: viewer\n`).join('')));
    const registry = createOperatorRegistry('env-admin-token-0123', entries);
    const spy = jest.spyOn(crypto, 'timingSafeEqual');
    try {
      expect(registry.authenticate('env-admin-token-0123')?.name).toBe('admin'); // the first entry
      expect(spy).toHaveBeenCalledTimes(4);
      spy.mockClear();
      expect(registry.authenticate('wrong')).toBeUndefined();
      expect(spy).toHaveBeenCalledTimes(4);
      for (const [a, b] of spy.mock.calls) expect([(a as Buffer).length, (b as Buffer).length]).toEqual([32, 32]);
    } finally {
      spy.mockRestore();
    }
  });
});
