import { createPrivateKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { exportJWK, SignJWT } from 'jose';
import { IsNull, type DataSource } from 'typeorm';
import { ACCESS_TOKEN_AUDIENCE, ACCESS_TOKEN_TYPE, type Claims } from '@trading/auth';
import { SigningKeyEntity, type SigningKey } from './signing-key.entity';

/**
 * Signs access tokens with the newest live ES256 key and publishes every live key as JWKS.
 * The first instance to start creates a key (under an advisory lock, so exactly one is made).
 */
export class TokenSigner {
  private constructor(
    private readonly issuer: string,
    private readonly active: { kid: string; key: KeyObject },
    private readonly published: { keys: Record<string, unknown>[] },
  ) {}

  static async load(dataSource: DataSource, issuer: string): Promise<TokenSigner> {
    const keys = await dataSource.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtext('signing-keys'))");
      const repo = tx.getRepository(SigningKeyEntity);
      let live = await repo.find({ where: { retiredAt: IsNull() }, order: { createdAt: 'DESC' } });
      if (!live.length) live = [await repo.save(await newSigningKey())];
      return live;
    });
    const newest = keys[0]!;
    return new TokenSigner(
      issuer,
      { kid: newest.kid, key: createPrivateKey(newest.privateKeyPem) },
      { keys: keys.map((k) => ({ ...k.publicJwk, kid: k.kid, alg: 'ES256', use: 'sig' })) },
    );
  }

  jwks(): { keys: Record<string, unknown>[] } {
    return this.published;
  }

  /**
   * DESIGN §4 claims: sub, sid, kind, client_id | pat_id, scope, iat, exp, jti; PAT sessions also
   * carry their access (READ_ONLY | READ_WRITE) and IP list (`ip_allow`): the edges authorise
   * from the token alone, never from what Redis says.
   */
  sign(
    claims: Pick<Claims, 'sub' | 'sid' | 'kind' | 'clientId' | 'patId' | 'scope' | 'access'> & { ipAllowlist?: string[] },
    lifetimeSeconds: number,
  ): Promise<string> {
    return new SignJWT({
      sid: claims.sid,
      kind: claims.kind,
      ...(claims.clientId ? { client_id: claims.clientId } : {}),
      ...(claims.patId ? { pat_id: claims.patId } : {}),
      ...(claims.access ? { access: claims.access } : {}),
      ...(claims.ipAllowlist?.length ? { ip_allow: claims.ipAllowlist } : {}),
      scope: claims.scope.join(' '),
    })
      .setProtectedHeader({ alg: 'ES256', kid: this.active.kid, typ: ACCESS_TOKEN_TYPE })
      .setSubject(claims.sub)
      .setIssuer(this.issuer)
      .setAudience(ACCESS_TOKEN_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + lifetimeSeconds)
      .setJti(randomUUID())
      .sign(this.active.key);
  }
}

async function newSigningKey(): Promise<Partial<SigningKey>> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    kid: randomUUID(),
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicJwk: (await exportJWK(publicKey)) as unknown as Record<string, unknown>,
  };
}
