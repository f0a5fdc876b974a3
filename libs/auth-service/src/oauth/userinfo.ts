import { Router } from 'express';
import type { JWTPayload } from 'jose';
import { EdgeAuthenticator, missingScopes } from '@trading/auth';
import { AppError, wwwAuthenticate } from '@trading/errors';
import type { OAuthContext } from './context';
import { noStore, OAuthError } from './errors';

const REQUIRED = ['read:accounts'];

/**
 * GET {base_url}/oauth/userinfo (spec §4.1, §2.4): a bearer access token with read:accounts.
 * The facade passes /oauth/* through, so auth authenticates the token itself, exactly as the
 * edge does (signature, live session).
 */
export function userinfoRoute(ctx: OAuthContext, verify: (token: string) => Promise<JWTPayload>): Router {
  const edge = new EdgeAuthenticator(verify, ctx.sessions);
  return Router().get('/oauth/userinfo', async (req, res) => {
    noStore(res);
    let claims;
    try {
      // A DPoP-bound token comes with a proof for this endpoint's public URL (through the facade, or auth's own).
      claims = await edge.authenticate(req.get('authorization'), req.ip, {
        proof: req.get('dpop'),
        method: req.method,
        urls: [`${ctx.settings.apiUrl}/oauth/userinfo`, `${ctx.settings.issuer}/oauth/userinfo`],
      });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.code === 'SERVICE_UNAVAILABLE') throw new OAuthError('temporarily_unavailable', err.message, 503);
      // An address refusal stays one (403, its own description), not a scope problem.
      throw new OAuthError('invalid_token', err.message, err.status, {
        'WWW-Authenticate': wwwAuthenticate(err) ?? 'Bearer realm="trading-api", error="invalid_token"',
      });
    }
    if (missingScopes(claims.scope, REQUIRED).length) {
      throw new OAuthError('insufficient_scope', 'userinfo needs scope read:accounts', 403, {
        'WWW-Authenticate': `Bearer realm="trading-api", error="insufficient_scope", scope="${REQUIRED.join(' ')}"`,
      });
    }
    const user = await ctx.users.findById(claims.sub);
    if (!user)
      throw new OAuthError('invalid_token', 'The user of this token no longer exists', 401, {
        'WWW-Authenticate': 'Bearer realm="trading-api", error="invalid_token"',
      });
    res.json({ sub: user.id, userId: user.id, email: user.email, firstName: user.firstName, lastName: user.lastName });
  });
}
