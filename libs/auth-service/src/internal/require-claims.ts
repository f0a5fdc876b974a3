import type { RequestHandler, Response } from 'express';
import {
  INTERNAL_CLAIMS_HEADER,
  methodAllowedFor,
  missingScopes,
  type Claims,
  type InternalClaimsVerifier,
  type Scope,
} from '@trading/auth';
import { AppError, errors } from '@trading/errors';

/**
 * Routes the facade authenticated at the edge: the caller arrives as signed internal claims.
 * Auth checks them again (signature, method rule, scopes) rather than trusting the network.
 * `patSessionOnly`: managing PATs is the user's own business, never a vendor app's, whatever
 * scopes the user granted it.
 */
export function requireClaims(
  verifier: InternalClaimsVerifier,
  scopes: Scope[],
  options: { patSessionOnly?: boolean } = {},
): RequestHandler {
  return async (req, res, next) => {
    const claims = await verifier.verify(req.get(INTERNAL_CLAIMS_HEADER));
    if (!claims) throw errors.unauthenticated('A bearer access token is required');
    if (options.patSessionOnly && claims.kind !== 'pat') throw patSessionRequired();
    if (!methodAllowedFor(claims.access, req.method)) throw new AppError('READ_ONLY_TOKEN', `A READ_ONLY token may not use ${req.method}`);
    if (missingScopes(claims.scope, scopes).length) throw errors.insufficientScope(scopes);
    res.locals['claims'] = claims;
    next();
  };
}

export const claimsOf = (res: Response): Claims => res.locals['claims'] as Claims;

const patSessionRequired = () =>
  new AppError('PAT_SESSION_REQUIRED', "Personal access tokens are managed with a PAT session (POST /pat/login), not with an app's token");
