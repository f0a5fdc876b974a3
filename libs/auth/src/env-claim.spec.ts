import { MemoryStore } from '@trading/redis';
import { generateKeyPair, jwtVerify, SignJWT } from 'jose';
import { assertSandboxToken, envClaim, type Claims } from './claims';
import { EdgeAuthenticator } from './edge';
import { InternalClaimsSigner, InternalClaimsVerifier } from './internal-claims';
import { generateServiceKey, TrustedServiceKeys } from './service-identity';
import { SessionStore } from './sessions';

describe('the environment a token was issued in (env)', () => {
  it('is one of DEV, UAT, PROD exactly, or absent; anything else is malformed', () => {
    expect(['DEV', 'UAT', 'PROD'].map(envClaim)).toEqual(['DEV', 'UAT', 'PROD']);
    expect(envClaim(undefined)).toBeUndefined();
    for (const bad of ['dev', 'Prod', '', 'TEST', null, 1, ['DEV'], { env: 'DEV' }]) expect(envClaim(bad)).toBeNull();
  });

  it('the sandbox takes DEV tokens only, naming the environment it refuses; no environment is not DEV', () => {
    expect(() => assertSandboxToken({ env: 'DEV' })).not.toThrow();
    for (const env of ['UAT', 'PROD'] as const)
      expect(() => assertSandboxToken({ env })).toThrow(
        expect.objectContaining({ code: 'FORBIDDEN', field: 'env', message: `The sandbox takes DEV tokens; this token is from ${env}` }),
      );
    expect(() => assertSandboxToken({})).toThrow(
      expect.objectContaining({
        code: 'FORBIDDEN',
        field: 'env',
        message: 'The sandbox takes DEV tokens; this token is from an auth deployment that does not name its environment',
      }),
    );
  });

  it('travels in the internal claims; a malformed one refuses the header rather than reading as absent', async () => {
    const facade = generateServiceKey('rest-facade');
    const verifier = new InternalClaimsVerifier('gateway', TrustedServiceKeys.of(facade));
    const claims: Claims = { sub: 'u1', sid: 's1', kind: 'oauth', clientId: 'c1', scope: ['write:orders'], env: 'DEV' };
    expect(await verifier.verify(await new InternalClaimsSigner(facade).sign(claims, 'gateway'))).toMatchObject({ env: 'DEV' });
    const { env: _env, ...without } = claims;
    expect(await verifier.verify(await new InternalClaimsSigner(facade).sign(without, 'gateway'))).not.toHaveProperty('env');
    const forged = { ...claims, env: 'dev' as unknown as Claims['env'] };
    expect(await verifier.verify(await new InternalClaimsSigner(facade).sign(forged, 'gateway'))).toBeNull();
  });

  it('is read from the access token at the edge, and a token with a malformed one is refused', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const sessions = new SessionStore(new MemoryStore());
    const edge = new EdgeAuthenticator(async (t) => (await jwtVerify(t, publicKey)).payload, sessions);
    await sessions.create({ sid: 'sid-env', userId: 'u1', kind: 'pat', patId: 'p1', expiresAt: Math.floor(Date.now() / 1000) + 300 });
    const token = (env: unknown) =>
      new SignJWT({ sub: 'u1', sid: 'sid-env', kind: 'pat', pat_id: 'p1', scope: 'read:accounts', access: 'READ_ONLY', env })
        .setProtectedHeader({ alg: 'ES256' })
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
    await expect(edge.authenticate(`Bearer ${await token('PROD')}`, '127.0.0.1')).resolves.toMatchObject({ env: 'PROD' });
    await expect(edge.authenticate(`Bearer ${await token(undefined)}`, '127.0.0.1')).resolves.not.toHaveProperty('env');
    await expect(edge.authenticate(`Bearer ${await token('STAGING')}`, '127.0.0.1')).rejects.toThrow('invalid');
  });
});
