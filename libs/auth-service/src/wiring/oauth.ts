import { deriveServiceSecret, DpopNonces, type DpopVerifier } from '@trading/auth';
import { RequestLimiter, type RefusalCounter } from '@trading/rate-limit';
import { Router, type Express } from 'express';
import { KeyEncryption } from '../keys/key-encryption';
import type { TokenSigner } from '../keys/token-signer';
import { localAccessTokenVerifier } from '../oauth/access-tokens';
import { authorizeRoute } from '../oauth/authorize';
import { ClientKeySets, type ClientKeySetsOptions } from '../oauth/client-keys';
import type { ClientLimits } from '../oauth/client-limits';
import type { OAuthContext } from '../oauth/context';
import { oauthErrorHandler } from '../oauth/errors';
import { metadataRoute } from '../oauth/metadata';
import { parRoute } from '../oauth/par';
import { revokeRoute } from '../oauth/revoke';
import { tokenRoute } from '../oauth/token';
import { userinfoRoute } from '../oauth/userinfo';
import type { Listeners } from './listeners';
import type { AuthServices } from './services';
import { apiBasePath, withoutTrailingSlash } from './urls';

/** The public keys access tokens are verified with (RFC 7517), cached by the edges for a while. */
export function mountSigningKeys(app: Express, signer: TokenSigner): void {
  app.get('/.well-known/jwks.json', async (_req, res) => {
    const jwks = await signer.currentJwks();
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(jwks);
  });
}

/**
 * OAuth 2.0: metadata and the authorize redirect, then the API side (token, PAR, revocation,
 * userinfo), which answers RFC 6749 errors, on both listeners. `jwksUriAccess`: how jwks_uri
 * hosts are resolved and which certificates their servers may present besides the system's
 * (tests). Returns the context the login pages share, and the limits on authenticating a client
 * (the webhook API authenticates apps the same way, in the same counters).
 */
export function mountOAuthRoutes(
  services: AuthServices,
  { app, internal }: Listeners,
  refusals: RefusalCounter,
  dpopVerifier: DpopVerifier,
  jwksUriAccess: Pick<ClientKeySetsOptions, 'resolve' | 'ca'> | undefined,
): { oauth: OAuthContext; clientLimits: ClientLimits } {
  const { config, logger, life, store, signer, namespace, limiter } = services;
  // private_key_jwt clients' keys; a jwks_uri is fetched from public addresses only.
  const clientKeys = new ClientKeySets({ allowLoopback: config.OAUTH_JWKS_URI_ALLOW_LOOPBACK, ...jwksUriAccess });
  life.defer('jwks_uri connections', () => clientKeys.close());
  const oauth = oauthContext(services, clientKeys, dpopVerifier);
  const verifyAccessToken = localAccessTokenVerifier(signer, config.AUTH_ISSUER);
  const tokenLimits: ClientLimits = {
    perClientAddress: limiter('oauth-client', config.OAUTH_CLIENT_MAX_FAILURES),
    perAddress: limiter('oauth-token:ip', config.OAUTH_TOKEN_MAX_FAILURES_PER_IP),
    perClient: new RequestLimiter(store, namespace, {
      name: 'oauth-token:client',
      perMinute: config.OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT,
    }),
    refusals,
  };
  app.use(metadataRoute(oauth.settings), authorizeRoute());
  internal.use(metadataRoute(oauth.settings), authorizeRoute(withoutTrailingSlash(config.AUTH_ISSUER)));
  const oauthApi = Router().use(
    tokenRoute(oauth, tokenLimits),
    parRoute(oauth, tokenLimits),
    revokeRoute(oauth, verifyAccessToken, tokenLimits),
    userinfoRoute(oauth, verifyAccessToken),
    oauthErrorHandler((err) => logger.error({ err }, 'unhandled OAuth error')),
  );
  app.use(oauthApi);
  internal.use(oauthApi);
  // Where vendors call them, {base_url}/oauth/*, on the public listener too: a deployment's ingress
  // sends that prefix straight here, so no facade hop sits on the token path. The same routes
  // answer; the authorize redirect leads to the login pages on the issuer, as through the facade.
  const apiPath = apiBasePath(config.AUTH_API_URL);
  if (apiPath) app.use(apiPath, authorizeRoute(withoutTrailingSlash(config.AUTH_ISSUER)), oauthApi);
  return { oauth, clientLimits: tokenLimits };
}

/** What every OAuth endpoint works with: its settings, and the services and stores behind grants and tokens. */
function oauthContext(
  { config, registry, grants, sessionStore, signer, sealed, users, securityLog, userAccounts }: AuthServices,
  clientKeys: ClientKeySets,
  dpopVerifier: DpopVerifier,
): OAuthContext {
  return {
    settings: {
      environment: config.APP_ENV,
      issuer: config.AUTH_ISSUER,
      apiUrl: withoutTrailingSlash(config.AUTH_API_URL),
      codeTtlSeconds: config.OAUTH_CODE_TTL_SECONDS,
      parTtlSeconds: config.OAUTH_PAR_TTL_SECONDS,
      requirePushedAuthorizationRequests: config.OAUTH_REQUIRE_PAR,
      accessTokenTtlSeconds: config.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenTtlSeconds: config.OAUTH_REFRESH_TOKEN_TTL_SECONDS,
      refreshReuseGraceSeconds: config.OAUTH_REFRESH_REUSE_GRACE_SECONDS,
    },
    registry,
    grants,
    sessions: sessionStore,
    signer,
    store: sealed,
    users,
    retryCipher: new KeyEncryption(deriveServiceSecret(config.SERVICE_KEY, 'refresh-retries')),
    clientKeys,
    securityLog,
    userAccounts,
    dpop: {
      verifier: dpopVerifier,
      nonces: new DpopNonces(deriveServiceSecret(config.SERVICE_KEY, 'dpop-nonces')),
      nonceRequired: config.DPOP_NONCE_REQUIRED ?? false,
    },
  };
}
