import type { IncomingMessage } from 'node:http';
import { Router, type Request } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { INTERNAL_CLAIMS_HEADER, missingScopes, type EdgeAuthenticator, type InternalClaimsCodec, type Scope } from '@trading/auth';
import { errors } from '@trading/errors';
import { authenticate } from '../edge/authenticate';

/**
 * Auth's endpoints that need no bearer token: the auth app itself decides (spec §4.1: POST
 * /pat/login). Exact for /pat/login: a prefix would also let /pat/login-activity through.
 */
const isPublicAuthPath = (pathname: string) => pathname.startsWith('/oauth/') || pathname === '/pat/login';

/**
 * Auth's endpoints that act for a signed-in caller. They are authenticated here like every
 * API call (token, live session, IP list, method rule) and reach auth as signed claims.
 */
export const AUTHENTICATED_AUTH_ROUTES: Array<{ method: 'GET' | 'POST'; path: string; scopes: Scope[] }> = [
  { method: 'POST', path: '/pat/revoke', scopes: ['write:accounts'] },
  { method: 'GET', path: '/pat/login-activity', scopes: ['read:accounts'] },
];

/** The signed claims of an authenticated request, handed from the route to the proxy hook. */
const signedClaims = new WeakMap<IncomingMessage, string>();

/**
 * `/v1/oauth/*` and `/v1/pat/*` belong to the auth app; the facade passes them through. The
 * client address the facade decided on (under its own trust-proxy rules) replaces any
 * X-Forwarded-For the caller sent, so the auth app sees exactly one trusted hop. A claims
 * header is only ever the facade's own: a caller's is dropped.
 */
export function authProxy(authUrl: string, edge: EdgeAuthenticator, codec: InternalClaimsCodec): Router {
  const router = Router();
  router.use(
    createProxyMiddleware<IncomingMessage>({
      target: authUrl,
      changeOrigin: false,
      pathFilter: isPublicAuthPath,
      proxyTimeout: 10_000,
      on: {
        proxyReq: (proxyReq, req) => {
          proxyReq.setHeader('x-forwarded-for', (req as Request).ip ?? '');
          proxyReq.removeHeader(INTERNAL_CLAIMS_HEADER);
        },
      },
    }),
  );

  const authenticated = createProxyMiddleware<IncomingMessage>({
    target: authUrl,
    changeOrigin: false,
    proxyTimeout: 10_000,
    on: {
      proxyReq: (proxyReq, req) => {
        proxyReq.setHeader('x-forwarded-for', (req as Request).ip ?? '');
        proxyReq.setHeader(INTERNAL_CLAIMS_HEADER, signedClaims.get(req) ?? '');
        // Auth needs the verified claims, not the caller's token.
        proxyReq.removeHeader('authorization');
      },
    },
  });
  for (const route of AUTHENTICATED_AUTH_ROUTES) {
    router[route.method === 'GET' ? 'get' : 'post'](
      route.path,
      authenticate(edge),
      async (req, _res, next) => {
        const claims = req.claims!;
        if (missingScopes(claims.scope, route.scopes).length) throw errors.insufficientScope(route.scopes);
        signedClaims.set(req, await codec.sign(claims));
        next();
      },
      authenticated,
    );
  }
  return router;
}
