import { createLocalJWKSet, decodeJwt, jwtVerify, type JWTPayload } from 'jose';
import { ACCESS_TOKEN_AUDIENCE, ACCESS_TOKEN_TYPE } from '@trading/auth';
import type { TokenSigner } from '../keys/token-signer';

/**
 * Verifies access tokens with this deployment's own published keys (no JWKS round trip): for
 * userinfo and revocation, which the facade passes through unauthenticated.
 */
export function localAccessTokenVerifier(signer: TokenSigner, issuer: string): (token: string) => Promise<JWTPayload> {
  // The key set follows rotations: rebuilt whenever the signer publishes a new one.
  let published = signer.jwks();
  let keys = createLocalJWKSet(published as unknown as Parameters<typeof createLocalJWKSet>[0]);
  return async (token) => {
    // A retirement on any instance takes the key out here before this token is checked.
    await signer.currentJwks();
    if (signer.jwks() !== published) {
      published = signer.jwks();
      keys = createLocalJWKSet(published as unknown as Parameters<typeof createLocalJWKSet>[0]);
    }
    return (await jwtVerify(token, keys, { issuer, audience: ACCESS_TOKEN_AUDIENCE, algorithms: ['ES256'], typ: ACCESS_TOKEN_TYPE }))
      .payload;
  };
}

/** Claims of a token whose signature is ours, expired or not; null for anything else. */
export async function ourTokenClaims(verify: (token: string) => Promise<JWTPayload>, token: string): Promise<JWTPayload | null> {
  try {
    return await verify(token);
  } catch (err) {
    // An expired token of ours is still ours: jose checks the signature before the expiry.
    if ((err as { code?: string }).code === 'ERR_JWT_EXPIRED') return decodeJwt(token);
    return null;
  }
}
