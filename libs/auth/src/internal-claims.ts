import { createSecretKey, type KeyObject } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { Claims } from './claims';

/**
 * The verified caller travels from the edge to every subgraph in this header, signed with a
 * key only the services share. Nothing behind the edge trusts an unsigned or stale header,
 * so reaching a subgraph's port directly gives nothing.
 */
export const INTERNAL_CLAIMS_HEADER = 'x-internal-claims';
const AUDIENCE = 'trading-api-internal';
const LIFETIME_SECONDS = 60;

export class InternalClaimsCodec {
  private readonly key: KeyObject;
  constructor(secret: string) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  sign(claims: Claims): Promise<string> {
    return new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256' })
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${LIFETIME_SECONDS}s`)
      .sign(this.key);
  }

  /** Returns null for a missing, forged or expired header. */
  async verify(header: string | undefined): Promise<Claims | null> {
    if (!header) return null;
    try {
      const { payload } = await jwtVerify(header, this.key, { audience: AUDIENCE, algorithms: ['HS256'] });
      if (typeof payload.sub !== 'string' || typeof payload['sid'] !== 'string' || !Array.isArray(payload['scope'])) return null;
      return {
        sub: payload.sub,
        sid: payload['sid'] as string,
        kind: payload['kind'] === 'oauth' ? 'oauth' : 'pat',
        clientId: payload['clientId'] as string | undefined,
        patId: payload['patId'] as string | undefined,
        scope: payload['scope'] as string[],
        access: payload['access'] as Claims['access'],
        ip: payload['ip'] as string | undefined,
      };
    } catch {
      return null;
    }
  }
}
