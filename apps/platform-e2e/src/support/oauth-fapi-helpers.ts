import { randomBytes, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type KeyLike } from 'jose';
import { http } from '@trading/testing';
import { pkce, tokenRequest, UserAgent, type ProvisionedApp } from './oauth-helpers';
import type { TestPlatform } from './test-platform';

/** Helpers for the FAPI 2.0 tests: pushed authorization requests, client assertions (private_key_jwt), a sign-in by request_uri. */

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** A signing key pair for private_key_jwt, its public JWK as an app registers it. */
export async function clientKey(alg: 'ES256' | 'PS256' | 'RS256' | 'EdDSA' = 'ES256', kid = randomUUID()) {
  const { publicKey, privateKey } = await generateKeyPair(alg, { crv: alg === 'EdDSA' ? 'Ed25519' : undefined });
  return { alg, kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** RFC 7523 client assertion; `claims` overrides any default (aud, exp as seconds since epoch, jti). */
export async function clientAssertion(
  key: { alg: string; kid: string; privateKey: KeyLike },
  clientId: string,
  aud: string,
  claims: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: clientId, sub: clientId, aud, jti: randomUUID(), iat: now, exp: now + 60, ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .sign(key.privateKey);
}

export const assertionParams = (assertion: string) => ({ client_assertion_type: JWT_BEARER, client_assertion: assertion });

/** POST {base_url}/oauth/par: form-encoded (secret in the body unless `auth` is given: Basic, or assertion parameters). */
export function pushRequest(
  url: string,
  params: Record<string, string>,
  auth: { basic?: [string, string]; json?: boolean } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  if (auth.json) return http('POST', url, { body: params });
  return tokenRequest(url, params, { form: true, basic: auth.basic });
}

/** A valid authorization request's parameters for `app` (PKCE S256), with the verifier to redeem its code. */
export function authorizationParams(app: ProvisionedApp, extra: Record<string, string> = {}) {
  const { verifier, challenge } = pkce();
  const state = randomBytes(9).toString('base64url');
  return {
    verifier,
    state,
    params: {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: app.redirectUri,
      scope: 'read:accounts',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    },
  };
}

/** Signs in and consents on the login page reached with client_id and request_uri; the redirect back, parsed. */
export async function consentByRequestUri(
  p: TestPlatform,
  clientId: string,
  requestUri: string,
  user: { email: string; password: string },
  ua = new UserAgent(p.urls.login),
  extra: Record<string, string> = {},
) {
  const q = new URLSearchParams({ client_id: clientId, request_uri: requestUri, ...extra });
  const page = await ua.open(`/en/login?${q}`, user);
  if (page.status !== 200) return { page, back: null };
  const answer = await ua.answer(page, 'approve');
  return { page, back: new URL(answer.location!) };
}
