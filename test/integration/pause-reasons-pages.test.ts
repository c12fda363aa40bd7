/**
 * The holder's portal page and the operator's console page of a paused key name each reason and
 * what settles it; an unpaid renewal links the open invoice when the record has one
 * (`billing_invoice_url`); the console settles one reason at a time, and offers no settle that
 * would clear `leaked` (only a roll does).
 */
import fs from 'node:fs';
import path from 'node:path';
import { readyAdminUrl } from '../kit/admin-api';
import { sha256Hex } from '../kit/gateway-stack';
import { holderFromLink, portalRequest, type Holder } from '../kit/portal';
import { startPortalStack, type PortalStack } from '../kit/portal-stack';
import { PAUSE_EXPLANATIONS } from '../../gateway/portal/holder-view';
import { REASON_NOTES } from '../../gateway/console/pages/pause-reasons';

jest.setTimeout(60_000);

const TOKEN = 'otto-operator-token-for-pause-pages-0123';
const INVOICE = 'https://invoice.stripe.com/i/acct_1Test/test_YWNjdF8x?s=ap';

let stack: PortalStack;
let portal: string;
let adminUrl: string;
let operator: PortalStack['operator'];
let holder: Holder;
let dir: string;

/** Writes a key record with these fields through `keys import` (how a record with an invoice link arrives before the billing code writes it). */
async function importKey(id: string, fields: string): Promise<void> {
  const file = path.join(dir, `${id}.yaml`);
  fs.writeFileSync(file, `keys:\n  - {id: ${id}, key_sha256: ${sha256Hex(`${id}-value`)}, tier: standard, countries: [GB], addresses: [127.0.0.1], account: acme, ${fields}}\n`);
  await operator.admin.import(file);
}

interface Session { cookie: string; csrf: string }
async function signIn(): Promise<Session> {
  const res = await fetch(`${adminUrl}/console/sign-in`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${TOKEN}` });
  expect(res.status).toBe(303);
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  const keys = await (await fetch(`${adminUrl}/console/keys`, { headers: { cookie } })).text();
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(keys)![1]! };
}
const consolePage = async (s: Session, url: string): Promise<string> => (await fetch(`${adminUrl}${url}`, { headers: { cookie: s.cookie } })).text();
const portalPage = async (url: string): Promise<string> => (await portalRequest(portal, url, { cookie: holder.cookie })).text;
/** The text of the page's list of reasons (tags removed, entities of the escaped apostrophe decoded). */
const reasonList = (page: string): string => (/<ul id="pause-reasons">([\s\S]*?)<\/ul>/.exec(page)?.[1] ?? '').replace(/<[^>]+>/g, '').replace(/&#39;/g, '\'');

beforeAll(async () => {
  const adminEnv = (into: string): Record<string, string> => {
    const tokensFile = path.join(into, 'operators.yaml');
    fs.writeFileSync(tokensFile, `- name: otto\n  token_sha256: ${sha256Hex(TOKEN)}\n  role: operator\n`);
    return { ADMIN_PORT: '0', ADMIN_TOKENS_FILE: tokensFile };
  };
  stack = await startPortalStack({ selfService: { countries: 'direct', tier: 'direct', roll_grace_seconds: 600 }, env: adminEnv });
  ({ portal, operator, dir } = stack);
  adminUrl = await readyAdminUrl(stack.gateway, TOKEN);
  await operator.accounts.create({ id: 'acme', name: 'Acme Ltd', emails: ['ops@acme.test'] });
  await importKey('owed', `status: paused, pause_reasons: [unpaid_renewal, payment_dispute], billing_invoice_url: "${INVOICE}"`);
  await importKey('leaky', 'status: paused, pause_reasons: [leaked, operator]');
  await importKey('old-style', 'status: paused, pause_reason: unpaid_renewal');
  holder = await holderFromLink(portal, portal, await operator.links.issue('acme'));
}, 90_000);

afterAll(async () => stack?.stop());

describe('the holder\'s portal', () => {
  it('names each reason and what settles it, and links the open invoice for the unpaid renewal', async () => {
    const page = await portalPage('/portal/keys/owed');
    const list = reasonList(page);
    for (const reason of ['payment_dispute', 'unpaid_renewal']) {
      expect(page).toContain(`data-reason="${reason}"`);
      expect(list).toContain(PAUSE_EXPLANATIONS[reason]!.settles);
    }
    expect(page).toContain('once every reason below is settled');
    expect(page).toMatch(new RegExp(`<li data-reason="unpaid_renewal">[^]*?<a id="invoice-link" href="${INVOICE.replace(/[.?]/g, '\\$&')}"`));
  });

  it('a leaked key says a roll settles it; an operator\'s pause says to contact the provider; no invoice link without one', async () => {
    const list = reasonList(await portalPage('/portal/keys/leaky'));
    expect(list).toContain(PAUSE_EXPLANATIONS.leaked!.settles);
    expect(list).toContain(PAUSE_EXPLANATIONS.operator!.settles);
    const old = await portalPage('/portal/keys/old-style');
    expect(reasonList(old)).toContain(PAUSE_EXPLANATIONS.unpaid_renewal!.settles);
    expect(old).not.toContain('invoice-link');
  });
});

describe('the operator\'s console', () => {
  let s: Session;
  beforeAll(async () => {
    s = await signIn();
  });

  it('names each reason and what settles it, links the invoice, and settles one reason at a time', async () => {
    const page = await consolePage(s, '/console/keys/owed');
    const list = reasonList(page);
    for (const reason of ['payment_dispute', 'unpaid_renewal']) expect(list).toContain(`${reason}: ${REASON_NOTES[reason]!.why}; ${REASON_NOTES[reason]!.settles}`);
    expect(page).toContain(`<a id="invoice-link" href="${INVOICE}"`);
    expect(page).toContain('Settle unpaid_renewal');
    expect(page).toContain('Settle payment_dispute');
    expect(page).toContain('Settle (resume)');

    const settled = await fetch(`${adminUrl}/console/keys/owed/settle`, {
      method: 'POST', redirect: 'manual', headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: `_csrf=${s.csrf}&reason=unpaid_renewal`,
    });
    expect(settled.status).toBe(303);
    expect(await operator.admin.show('owed')).toMatchObject({ status: 'paused', pause_reasons: ['payment_dispute'] });
    const after = await consolePage(s, '/console/keys/owed');
    expect(reasonList(after)).not.toContain('unpaid_renewal');
    expect(after).not.toContain('invoice-link');
    const list2 = await consolePage(s, '/console/keys?state=paused');
    expect(list2).toContain('(payment_dispute)');
    expect(list2).toContain('(leaked, operator)');
  });

  it('a leaked key offers no settle that would clear leaked', async () => {
    const page = await consolePage(s, '/console/keys/leaky');
    expect(reasonList(page)).toContain(`leaked: ${REASON_NOTES.leaked!.why.replace(/'/g, '\'')}; ${REASON_NOTES.leaked!.settles}`);
    expect(page).not.toContain('Settle (resume)');
    expect(page).toContain('only a roll clears it');
  });
});
