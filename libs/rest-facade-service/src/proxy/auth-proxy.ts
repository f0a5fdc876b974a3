import { Router, type Request } from 'express';
import {
  CLIENT_ADDRESS_HEADER,
  ExpiringCache,
  INTERNAL_CLAIMS_HEADER,
  INTERNAL_CLAIMS_LIFETIME_SECONDS,
  INTERNAL_TRUST,
  missingScopes,
  type EdgeAuthenticator,
  type InternalClaimsSigner,
  type Scope,
} from '@trading/auth';
import { AppError, errors } from '@trading/errors';
import type { ApiLimits, OAuthAddressBudget } from '@trading/rate-limit';
import { authenticate, type PublicRequest } from '../edge/authenticate';
import { Forwarder, type InProcessApp } from './forward';

/**
 * Auth's endpoints that need no bearer token: the auth app itself decides (POST /pat/login; the
 * webhook API, where an app authenticates with its own client credentials). Exact for
 * /pat/login: a prefix would also let /pat/login-activity through.
 */
export const isPublicAuthPath = (pathname: string) =>
  pathname.startsWith('/oauth/') || pathname === '/pat/login' || pathname.startsWith('/webhooks/');

/**
 * Auth's endpoints that act for a signed-in caller. They are authenticated here like every
 * API call (token, live session, IP list, method rule) and reach auth as signed claims. PAT
 * management takes a PAT session only: a vendor app's token is refused here, and again by auth.
 */
export const AUTHENTICATED_AUTH_ROUTES: Array<{ method: 'GET' | 'POST'; path: string; scopes: Scope[]; patSessionOnly: true }> = [
  { method: 'POST', path: '/pat/revoke', scopes: ['write:accounts'], patSessionOnly: true },
  { method: 'GET', path: '/pat/login-activity', scopes: ['read:accounts'], patSessionOnly: true },
];

/**
 * Kept-alive connections to auth's internal listener, for the requests the facade passes on, or
 * that listener's app itself when auth runs in this process. The caller owns it (close() on close).
 */
export function authConnections(internalUrl: string, inProcess?: () => InProcessApp | undefined): Forwarder {
  return new Forwarder(internalUrl, 'auth', { connections: 256, timeoutMs: 10_000, inProcess });
}

/**
 * `/v1/oauth/*`, `/v1/pat/*` and `/v1/webhooks/*` belong to the auth app; the facade passes them to auth's
 * internal listener. The client address the facade decided on (under its own trust-proxy
 * rules) travels signed by the facade, never as an X-Forwarded-For auth would have to believe.
 * A claims header is only ever the facade's own: a caller's is dropped. `/oauth/*` and `/pat/login`
 * are limited per client address by `oauthBudget` (failures and unauthenticated requests) before
 * anything is signed; auth's public listener spends the same budget.
 */
export function authProxy(
  auth: { publicRequest: PublicRequest; connections: Forwarder },
  edge: EdgeAuthenticator,
  signer: InternalClaimsSigner,
  limits: ApiLimits,
  oauthBudget?: OAuthAddressBudget,
): Router {
  const router = Router();
  // One ES256 signature per address per half-lifetime, not per request (auth then verifies each
  // header once, too); auth still sees a header at least half its life from expiry.
  const signedAddresses = new ExpiringCache<string>();
  const signAddress = async (req: Request) => {
    const ip = req.ip ?? '';
    let header = signedAddresses.get(ip);
    if (!header) {
      header = await signer.signClientAddress(ip, 'auth');
      signedAddresses.set(ip, header, Date.now() + (INTERNAL_CLAIMS_LIFETIME_SECONDS * 1000) / 2);
    }
    return { [CLIENT_ADDRESS_HEADER]: header };
  };
  if (oauthBudget) router.use(oauthBudget.middleware());
  router.use(async (req, res, next) => {
    if (!isPublicAuthPath(req.path)) return next();
    // The address travels signed; a caller's own X-Forwarded-For or claims header is dropped.
    return auth.connections.forward(req, res, {
      ...(await signAddress(req)),
      'x-forwarded-for': undefined,
      [INTERNAL_CLAIMS_HEADER]: undefined,
    });
  });

  for (const route of AUTHENTICATED_AUTH_ROUTES) {
    router[route.method === 'GET' ? 'get' : 'post'](route.path, authenticate(edge, limits, auth.publicRequest), async (req, res) => {
      const claims = req.claims!;
      if (route.patSessionOnly && claims.kind !== 'pat')
        throw new AppError(
          'PAT_SESSION_REQUIRED',
          "Personal access tokens are managed with a PAT session (POST /pat/login), not with an app's token",
        );
      if (missingScopes(claims.scope, route.scopes).length) throw errors.insufficientScope(route.scopes);
      // Auth is trusted with account scopes only: pass on no more (a READ_WRITE PAT holds all six).
      const forAuth = { ...claims, scope: claims.scope.filter((s) => INTERNAL_TRUST.auth['rest-facade']!.includes(s)) };
      // Auth's internal listener, the only one that reads claims: it gets the verified claims, not the caller's token.
      await auth.connections.forward(req, res, {
        ...(await signAddress(req)),
        'x-forwarded-for': undefined,
        authorization: undefined,
        [INTERNAL_CLAIMS_HEADER]: await signer.signFor(forAuth, 'auth'),
      });
    });
  }
  return router;
}
