// A real OpenID Connect provider for the portal's tests (`oidc-provider`, ESM, so a process of its
// own): listens on a free loopback port and logs {"msg":"listening","port":N} like the gateway.
// OIDC_CLIENT (JSON: client_id, client_secret, redirect_uri) is its one client; OIDC_ACCOUNTS
// (JSON: login → {email, email_verified}) are the people who can sign in on its development login
// page (any password). Consent is granted without a prompt, so a sign-in is: login form, then back.
import http from 'node:http';
import Provider from 'oidc-provider';

const client = JSON.parse(process.env.OIDC_CLIENT);
const accounts = JSON.parse(process.env.OIDC_ACCOUNTS);
const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const provider = new Provider(`http://127.0.0.1:${port}`, {
    clients: [{ client_id: client.client_id, client_secret: client.client_secret, redirect_uris: [client.redirect_uri], grant_types: ['authorization_code'], response_types: ['code'] }],
    async findAccount(_ctx, sub) {
      const claims = accounts[sub];
      return { accountId: sub, claims: async () => ({ sub, ...(claims ?? {}) }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    // The email claims in the ID token itself (the portal reads the ID token, not userinfo).
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    cookies: { keys: ['portal-test-provider-cookie-key'] },
    async loadExistingGrant(ctx) {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope('openid email');
      await grant.save();
      return grant;
    },
  });
  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
