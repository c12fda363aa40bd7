// gateway/console/routes/: the console's routers: the keys pages and forms (key-routes.ts), and what was recorded:
// the audit log and the monthly usage report (record-routes.ts).
import type { Response, Router } from 'express';
import { ApiError } from '../../errors';
import type { KeyAdmin } from '../../keys/key-admin';
import { allows, type Permission } from '../../operators/roles';
import type { ConsoleStore } from '../console-store';
import { field, queryOf, recordInput, sendPage, wholeNumber } from '../forms';
import { confirmPage, type ConfirmAction } from '../pages/confirm-page';
import { keyPage } from '../pages/key-page';
import { keyValuePage } from '../pages/key-value-page';
import { KEYS_PER_PAGE, keysListPage, type KeysFilter } from '../pages/keys-list';
import { newKeyPage } from '../pages/new-key-page';
import { findKeys } from '../keys-search';
import { need, signed } from '../signed-in';

/** The keys pages: the list, one key, and the forms that change keys (through the key admin). */
export function addKeyRoutes(router: Router, store: ConsoleStore): void {
  const admin = (): KeyAdmin => {
    if (!store.admin) throw new ApiError('forbidden', {}, undefined, `This console is read-only: keys come from ${store.source}.`);
    return store.admin;
  };

  router.get('/keys', need('read'), async (req, res) => {
    const q = queryOf(req);
    const cursor = q.get('cursor') || undefined;
    const filter: KeysFilter = {
      q: q.get('q')?.trim() ?? '',
      state: q.get('state') ?? '',
      tier: q.get('tier') ?? '',
      country: (q.get('country') ?? '').trim().toUpperCase(),
      ...(cursor ? { cursor } : {}),
    };
    // Bounded: at most KEYS_SCAN_BUDGET records looked through, usage read for the page's rows only.
    const found = await findKeys(store, filter, cursor);
    const rows = await Promise.all(found.keys.map(async (key) => ({ key, usage: await store.usage(key.id) })));
    const s = signed(res);
    sendPage(res, 200, keysListPage(s.ctx, {
      rows, next_cursor: found.next_cursor, scanned: found.scanned, stoppedAtBound: found.keys.length < KEYS_PER_PAGE && found.next_cursor !== null,
      filter, source: store.source, canIssue: !!store.admin && allows(s.role, 'issue'), readOnly: !store.admin,
    }));
  });

  router.get('/keys/new', need('issue'), (_req, res) => {
    admin();
    sendPage(res, 200, newKeyPage(signed(res).ctx));
  });
  router.post('/keys', need('issue'), async (req, res) => {
    const created = await admin().create({ id: field(req, 'id'), ...recordInput(req) });
    sendPage(res, 201, keyValuePage(signed(res).ctx, created.id, created.key, 'created'));
  });

  router.get('/keys/:id', need('read'), async (req, res) => {
    const id = req.params.id as string;
    const [key, usage, audit, history] = await Promise.all([
      store.show(id), store.usage(id), store.readAudit({ keyId: id, limit: 10 }), store.history?.(id, 14),
    ]);
    const done = queryOf(req).get('done') ?? undefined;
    const s = signed(res);
    sendPage(res, 200, keyPage(s.ctx, { key, usage, audit: audit.entries, ...(history ? { history } : {}), role: s.role, readOnly: !store.admin, source: store.source, ...(done ? { done } : {}) }));
  });

  const CONFIRM: Record<ConfirmAction, Permission> = { pause: 'manage', roll: 'issue', revoke: 'issue' };
  router.get('/keys/:id/confirm/:action', (req, res, next) => {
    const action = req.params.action as ConfirmAction;
    if (!Object.hasOwn(CONFIRM, action)) return next('route');
    need(CONFIRM[action])(req, res, next);
  }, async (req, res) => {
    admin();
    sendPage(res, 200, confirmPage(signed(res).ctx, await store.show(req.params.id as string), req.params.action as ConfirmAction));
  });

  const back = (res: Response, id: string, done: string): void => res.redirect(303, `/console/keys/${encodeURIComponent(id)}?done=${done}`);
  router.post('/keys/:id/pause', need('manage'), async (req, res) => {
    await admin().pause(req.params.id as string, field(req, 'reason'));
    back(res, req.params.id as string, 'paused');
  });
  router.post('/keys/:id/settle', need('manage'), async (req, res) => {
    await admin().settle(req.params.id as string, field(req, 'reason') || undefined);
    back(res, req.params.id as string, 'settled');
  });
  router.post('/keys/:id/set', need('manage'), async (req, res) => {
    await admin().set(req.params.id as string, recordInput(req));
    back(res, req.params.id as string, 'changed');
  });
  router.post('/keys/:id/revoke', need('issue'), async (req, res) => {
    await admin().revoke(req.params.id as string);
    back(res, req.params.id as string, 'revoked');
  });
  router.post('/keys/:id/roll', need('issue'), async (req, res) => {
    const grace = wholeNumber('grace_seconds', field(req, 'grace_seconds'));
    const rolled = await admin().roll(req.params.id as string, grace);
    sendPage(res, 201, keyValuePage(signed(res).ctx, rolled.id, rolled.key, 'rolled'));
  });
}
