/**
 * The refresh-rotation peer: node-oidc-provider (the certified OpenID/OAuth server) as a bench
 * target, configured like our auth for vendor apps: one confidential client (client_secret_basic,
 * authorization code + refresh token), PKCE required (S256), refresh tokens always rotated, a
 * long refresh-token lifetime, ES256 JWT access tokens for one resource (`read:accounts`), and
 * its storage in Redis (./redis-adapter.mjs). Interactions: a minimal handler that signs in
 * one fixed account and approves what is asked (it is a bench peer; there is no one to ask).
 *
 * Env: PORT, REDIS_URL, OIDC_REDIS_PREFIX, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URI; OIDC_SIGNING_JWK and
 * OIDC_COOKIE_KEY when ./cluster.mjs runs it (each process must sign and read cookies alike).
 * Plain node (oidc-provider is ESM-only): `node tools/bench/oidc-peer/server.mjs`.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import { createClient } from 'redis';
import { redisAdapter } from './redis-adapter.mjs';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const port = Number(env('PORT'));
const issuer = `http://127.0.0.1:${port}`;
const RESOURCE = 'https://api.bench.example/v1';
const ACCOUNT = 'bench-user';
const DAY = 24 * 60 * 60;

const redis = createClient({ url: env('REDIS_URL') });
redis.on('error', (err) => console.error('redis:', err.message));
await redis.connect();

// In ./cluster.mjs's workers, the key and cookie keys its primary made for them all.
const signingKey = {
  ...(process.env.OIDC_SIGNING_JWK
    ? JSON.parse(process.env.OIDC_SIGNING_JWK)
    : generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' })),
  kid: 'bench-es256',
  alg: 'ES256',
  use: 'sig',
};

const provider = new Provider(issuer, {
  adapter: redisAdapter(redis, env('OIDC_REDIS_PREFIX')),
  clients: [
    {
      client_id: env('OIDC_CLIENT_ID'),
      client_secret: env('OIDC_CLIENT_SECRET'),
      redirect_uris: [env('OIDC_REDIRECT_URI')],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'ES256',
    },
  ],
  jwks: { keys: [signingKey] },
  cookies: { keys: [process.env.OIDC_COOKIE_KEY ?? randomBytes(32).toString('hex')] },
  findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  scopes: ['openid', 'offline_access', 'read:accounts'],
  pkce: { required: () => true },
  rotateRefreshToken: true,
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: { AccessToken: 900, AuthorizationCode: 60, Grant: 90 * DAY, RefreshToken: 90 * DAY, Interaction: 600, Session: DAY, IdToken: 900 },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => RESOURCE,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'read:accounts',
        audience: RESOURCE,
        accessTokenFormat: 'jwt',
        accessTokenTTL: 900,
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
});

/** Login: the fixed account. Consent: a grant of every scope the request is missing. */
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session, grantId } = details;
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: ACCOUNT } };
  } else if (prompt.name === 'consent') {
    const grant = grantId
      ? await provider.Grant.find(grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    if (prompt.details.missingOIDCScope) grant.addOIDCScope(prompt.details.missingOIDCScope.join(' '));
    for (const [indicator, scopes] of Object.entries(prompt.details.missingResourceScopes ?? {}))
      grant.addResourceScope(indicator, scopes.join(' '));
    result = { consent: { grantId: await grant.save() } };
  } else {
    throw new Error(`unexpected prompt ${prompt.name}`);
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
}

const callback = provider.callback();
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url?.startsWith('/interaction/')) {
    interaction(req, res).catch((err) => {
      console.error(err);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err?.message ?? err));
    });
    return;
  }
  if (req.url === '/readyz') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
    return;
  }
  callback(req, res);
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => console.log(`oidc-provider ${issuer} ready`));

const stop = () => {
  server.close();
  server.closeAllConnections();
  redis.close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
