import { AppError, errors } from '@trading/errors';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { Claims } from './claims';
import { ipAllowed } from './ip';
import type { SessionStore } from './sessions';

export interface AccessTokenSettings {
  /** The auth app's JWKS document. */
  jwksUrl: string;
  issuer: string;
  audience: string;
}

export const ACCESS_TOKEN_AUDIENCE = 'trading-api';

/** Verifies access-token signatures against the auth app's JWKS (fetched once, cached, refetched on an unknown `kid`). */
export function createAccessTokenVerifier(settings: AccessTokenSettings): (token: string) => Promise<JWTPayload> {
  const jwks = createRemoteJWKSet(new URL(settings.jwksUrl), { cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000, timeoutDuration: 3000 });
  return async (token) => {
    const { payload } = await jwtVerify(token, jwks, { issuer: settings.issuer, audience: settings.audience, algorithms: ['ES256'] });
    return payload;
  };
}

export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
}

/**
 * Authenticates a request at the edge (facade for REST, gateway for GraphQL): a valid
 * signature, a live session (revocation), and the PAT's IP restriction. Fails closed: when
 * session state cannot be read the caller gets 503, never access.
 */
export class EdgeAuthenticator {
  constructor(
    private readonly verify: (token: string) => Promise<JWTPayload>,
    private readonly sessions: SessionStore,
  ) {}

  async authenticate(authorization: string | undefined, clientIp: string | undefined): Promise<Claims> {
    const token = bearerToken(authorization);
    if (!token) throw new AppError('UNAUTHENTICATED', 'A bearer access token is required', { noCredentials: true });

    let payload: JWTPayload;
    try {
      payload = await this.verify(token);
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw errors.unauthenticated('The access token has expired');
      if (err instanceof joseErrors.JWKSTimeout || isNetworkFailure(err)) {
        throw errors.unavailable('Token verification is temporarily unavailable');
      }
      throw errors.unauthenticated('The access token is invalid');
    }
    const sid = payload['sid'];
    if (typeof payload.sub !== 'string' || typeof sid !== 'string') throw errors.unauthenticated('The access token is invalid');

    let session;
    try {
      session = await this.sessions.get(sid);
    } catch {
      throw errors.unavailable('Session state is temporarily unavailable; retry shortly');
    }
    if (!session || session.userId !== payload.sub) throw errors.unauthenticated('The session has ended (revoked or expired)');
    if (!ipAllowed(clientIp, session.ipAllowlist)) {
      throw new AppError('IP_NOT_ALLOWED', 'This token may not be used from this address');
    }
    return {
      sub: session.userId,
      sid,
      kind: session.kind,
      clientId: session.clientId,
      patId: session.patId,
      scope: session.scope,
      access: session.access,
      ip: clientIp,
    };
  }
}

/** The JWKS could not be fetched (as opposed to a bad token): the caller should retry, not re-authenticate. */
function isNetworkFailure(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EAI_AGAIN'].includes(String(code)) || /fetch failed/.test(String(message));
}
