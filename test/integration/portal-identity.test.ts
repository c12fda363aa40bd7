/**
 * How the portal compares the identity provider's verified email with accounts' addresses, signed
 * in through a real OpenID provider (test/kit/oidc-provider.mjs) over HTTP: ASCII letters in any
 * case, every other character exactly, so no Unicode case mapping or normalisation makes one
 * verified address reach another's account.
 */
import { signInThroughProvider, providerEnv, startOidcProvider } from '../kit/oidc-sign-in';
import { portalRequest, until } from '../kit/portal';
import { startPortalStack, type PortalStack } from '../kit/portal-stack';
import type { RunningProcess } from '../kit/processes';

/** The provider's people: login → the email it verifies. */
const PEOPLE = {
  kate: { email: 'kate@acme.example', email_verified: true },
  shouting: { email: 'KATE@ACME.EXAMPLE', email_verified: true },
  kelvin: { email: '\u212Aate@acme.example', email_verified: true }, // KELVIN SIGN: toLowerCase() makes it "kate@…"
  spaced: { email: 'kate@acme.example\u00a0', email_verified: true }, // a no-break space that trim() removes
  composed: { email: 'jos\u00e9@acme.example', email_verified: true },
  decomposed: { email: 'jose\u0301@acme.example', email_verified: true },
  angstrom: { email: '\u212Bsa@acme.example', email_verified: true }, // ANGSTROM SIGN: toLowerCase() makes it "åsa@…"
};

let stack: PortalStack;
let provider: RunningProcess;
let publicUrl: string;
let operator: PortalStack['operator'];

beforeAll(async () => {
  const withProvider = async (_dir: string, portal: string): Promise<Record<string, string>> => {
    provider = await startOidcProvider(portal, PEOPLE);
    return providerEnv(provider);
  };
  stack = await startPortalStack({ env: withProvider });
  ({ portal: publicUrl, operator } = stack);
  // The portal listens once the provider is discovered, after the gateway's own listener.
  await until('the portal listens', async () => (await portalRequest(publicUrl, '/portal/sign-in').catch(() => undefined))?.status === 200, 20_000);
  await operator.accounts.create({ id: 'acme', name: 'Acme Ltd', emails: ['Kate@Acme.Example', 'jos\u00e9@acme.example', '\u00e5sa@acme.example'] });
  await operator.key('acme-1', 'acme');
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await provider?.stop();
});

/** Who the portal's header says is signed in, or undefined with no session. */
async function signedInAs(login: keyof typeof PEOPLE): Promise<string | undefined> {
  const answer = await signInThroughProvider(publicUrl, login);
  if (answer.status !== 303 || answer.location !== '/portal/keys' || !answer.cookie) return undefined;
  const page = await portalRequest(publicUrl, '/portal/keys', { cookie: answer.cookie });
  expect(page.status).toBe(200);
  return /class="who"[^>]*>([^<]*)</.exec(page.text)?.[1]?.trim();
}

test('the account\'s address signs in, in any case of its ASCII letters, under the address as the account lists it', async () => {
  expect(await operator.accounts.get('acme')).toMatchObject({ emails: ['kate@acme.example', 'jos\u00e9@acme.example', '\u00e5sa@acme.example'] });
  expect(await signedInAs('kate')).toContain('(kate@acme.example)');
  expect(await signedInAs('shouting')).toContain('(kate@acme.example)');
  expect(await signedInAs('composed')).toContain('(jos\u00e9@acme.example)');
});

test('a verified address that Unicode case mapping, normalisation or trimming would turn into the account\'s gets no session', async () => {
  for (const login of ['kelvin', 'spaced', 'decomposed', 'angstrom'] as const) {
    const answer = await signInThroughProvider(publicUrl, login);
    expect({ login, status: answer.status, session: answer.cookie }).toEqual({ login, status: 403, session: undefined });
    expect(answer.text).toContain('No account');
  }
  // Nothing was audited or done in the account's name.
  const audit = await operator.admin.readAudit({ keyId: 'acme-1', limit: 10 });
  expect(audit.entries.filter((e) => e.actor.startsWith('holder:'))).toEqual([]);
});

test('addresses that differ in ASCII case only are one identity (409 on a second account); the Kelvin-sign spelling is an identity of its own', async () => {
  // Different strings, different identities: the Kelvin-sign address is its own (and may be given).
  await operator.accounts.create({ id: 'kelvin', name: 'Kelvin Ltd', emails: ['\u212Aate@acme.example'] });
  expect(await signedInAs('kelvin')).toContain('Kelvin Ltd');
  expect(await signedInAs('kate')).toContain('Acme Ltd');
  await expect(operator.accounts.create({ id: 'copy', name: 'Copy', emails: ['KATE@acme.example'] })).rejects.toMatchObject({ code: 'conflict' });
});
