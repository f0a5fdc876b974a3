import { Router, type Request, type RequestHandler } from 'express';
import type { JWTPayload } from 'jose';
import { EdgeAuthenticator, missingScopes, type Claims } from '@trading/auth';
import { AppError, wwwAuthenticate } from '@trading/errors';
import type { Client } from '../registry/registry.service';
import type { OAuthContext } from './context';
import { noStore, OAuthError } from './errors';
import { authenticationClaims, pairwiseSubject, scopedClaims } from './id-token';
import { sessionAmrKey } from './token-store';

const REQUIRED = ['read:accounts'];

/**
 * GET and POST {base_url}/oauth/userinfo (OpenID Connect Core §5.3): an access
 * token with read:accounts (the spec's fields), or of a grant with openid (sub, and the claims
 * of profile and email as granted). The token comes in the Authorization header, either way.
 * An app's token gets that app's pairwise `sub` and no platform user id, so two apps cannot match
 * their users by what userinfo tells them; a PAT's session (the user's own) gets the user id.
 * The facade passes /oauth/* through, so auth authenticates the token itself, exactly as the
 * edge does (signature, live session).
 */
export function userinfoRoute(ctx: OAuthContext, verify: (token: string) => Promise<JWTPayload>): Router {
  const edge = new EdgeAuthenticator(verify, ctx.sessions);
  const answer: RequestHandler = async (req, res) => {
    noStore(res);
    const claims = await authenticated(ctx, edge, req);
    // OpenID Connect: the grant's own scopes (openid, profile, email stay off access tokens) say what is released.
    const granted = claims.kind === 'oauth' ? await grantScopes(ctx, claims.sid) : [];
    const oidc = granted.includes('openid');
    const accounts = !missingScopes(claims.scope, REQUIRED).length;
    if (!accounts && !oidc) {
      throw new OAuthError('insufficient_scope', 'userinfo needs scope read:accounts or openid', 403, {
        'WWW-Authenticate': `Bearer realm="trading-api", error="insufficient_scope", scope="${REQUIRED.join(' ')}"`,
      });
    }
    const user = await ctx.users.findById(claims.sub);
    if (!user)
      throw new OAuthError('invalid_token', 'The user of this token no longer exists', 401, {
        'WWW-Authenticate': 'Bearer realm="trading-api", error="invalid_token"',
      });
    const client = await tokenApp(ctx, claims);
    res.json({
      sub: client ? pairwiseSubject(client, user.id) : user.id,
      ...(oidc ? { ...scopedClaims(user, granted), ...(await sessionAuthentication(ctx, claims.sid)) } : {}),
      ...(accounts
        ? { ...(client ? {} : { userId: user.id }), email: user.email, firstName: user.firstName, lastName: user.lastName }
        : {}),
    });
  };
  return Router().get('/oauth/userinfo', answer).post('/oauth/userinfo', answer);
}

/** The token's caller, authenticated exactly as at the edge; a refusal is answered as RFC 6750 says. */
async function authenticated(ctx: OAuthContext, edge: EdgeAuthenticator, req: Request): Promise<Claims> {
  try {
    // A DPoP-bound token comes with a proof for this endpoint's public URL (through the facade, or auth's own).
    return await edge.authenticate(req.get('authorization'), req.ip, {
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
}

/** An app's token: the app, still active (its `sub` is the app's pairwise identifier, as in its access and ID tokens); a PAT's: none. */
async function tokenApp(ctx: OAuthContext, claims: Claims): Promise<Client | null> {
  const client =
    claims.kind === 'oauth' && claims.clientId ? await ctx.registry.findClient(claims.clientId, ctx.settings.environment) : null;
  if (claims.kind === 'oauth' && !client)
    throw new OAuthError('invalid_token', 'The app of this token is no longer active', 401, {
      'WWW-Authenticate': 'Bearer realm="trading-api", error="invalid_token"',
    });
  return client;
}

/** How the user signed in for the grant behind an OAuth session (`amr`, `acr`), as its ID tokens say; none if not recorded. */
async function sessionAuthentication(ctx: OAuthContext, sid: string): Promise<Record<string, unknown>> {
  const raw = await ctx.store.get(sessionAmrKey(sid));
  return raw ? authenticationClaims(JSON.parse(raw) as string[]) : {};
}

/** The scopes of the grant behind an OAuth session (the live grant in PostgreSQL), or none. */
async function grantScopes(ctx: OAuthContext, sid: string): Promise<string[]> {
  const session = await ctx.sessions.get(sid);
  const grant = session?.grantId ? await ctx.grants.find(session.grantId) : null;
  return grant && !grant.revokedAt ? grant.scope : [];
}
