import type { AuditEntry } from '../../gateway/audit/audit-entry';
import type { KeyView } from '../../gateway/keys/key-admin';
import { holderChanges, holderKey } from '../../gateway/portal/holder-view';
import { sameOrigin } from '../../gateway/portal/origin-check';
import type { Request, Response } from 'express';

const view: KeyView = {
  id: 'k1', tier: 'standard', countries: ['GB'], addresses: ['127.0.0.1'], address: '127.0.0.1', status: 'paused', pause_reasons: ['unpaid_renewal'], pause_reason: 'unpaid_renewal',
  limits: { per_minute: 1, per_day: 2, per_month: 3 }, note: 'internal', created_at: 'c', updated_at: 'u', account: 'acme',
} as KeyView;

test('a holder\'s view of a key carries no note (nor any field it does not list)', () => {
  const k = holderKey(view);
  expect(JSON.stringify(k)).not.toContain('internal');
  expect(Object.keys(k).sort()).toEqual(['addresses', 'countries', 'createdAt', 'id', 'limits', 'pauseReasons', 'status', 'tier', 'updatedAt']);
});

test('a holder\'s history: notes dropped, operators named only as the provider, the holder as "you"', () => {
  const entry = (actor: string, changes: AuditEntry['changes'], action: AuditEntry['action'] = 'change'): AuditEntry => ({ id: '1', time: 't', actor, channel: 'admin_api', action, key_id: 'k1', changes });
  const shown = holderChanges([
    entry('ada', { note: { before: null, after: 'internal' } }),
    entry('ada', { countries: { before: ['GB'], after: ['GB', 'FR'] }, note: { before: null, after: 'x' } }),
    entry('holder:acme:ops@acme.test', { addresses: { before: ['a'], after: ['b'] } }),
    entry('holder:acme:link', {}, 'roll'),
    entry('holder:other:x@y', { tier: { before: 'standard', after: 'advanced' } }),
    entry('ada', { request: { before: null, after: {} } }, 'request.create' as AuditEntry['action']),
  ], 'acme');
  expect(shown.map((c) => [c.by, c.action, Object.keys(c.changes)])).toEqual([
    ['your provider', 'change', ['countries']],
    ['you (ops@acme.test)', 'change', ['addresses']],
    ['you (one-time link)', 'roll', []],
    ['your provider', 'change', ['tier']],
  ]);
  expect(JSON.stringify(shown)).not.toContain('internal');
});

describe('the Origin check of every change', () => {
  const check = sameOrigin('https://portal.example.com');
  const run = (headers: Record<string, string>): boolean => {
    let passed = false;
    try {
      check({ headers } as unknown as Request, {} as Response, () => { passed = true; });
    } catch {
      return false;
    }
    return passed;
  };
  test.each([
    [{ origin: 'https://portal.example.com' }, true],
    [{ origin: 'https://portal.example.com:443' }, true],
    [{ origin: 'http://portal.example.com' }, false],
    [{ origin: 'https://evil.example' }, false],
    [{ origin: 'null' }, false],
    [{ referer: 'https://portal.example.com/portal/keys/k1' }, true],
    [{ referer: 'https://evil.example/portal' }, false],
    [{ referer: 'not a url' }, false],
    [{ origin: 'https://evil.example', referer: 'https://portal.example.com/portal' }, false],
    [{}, false],
  ])('%j → %s', (headers, ok) => expect(run(headers)).toBe(ok));
});
