/**
 * DPoP proofs (RFC 9449) for the bench: made synchronously with node:crypto (ES256, raw r‖s
 * signature), so autocannon can put a fresh proof on every request it sends.
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomUUID, sign, type JsonWebKey } from 'node:crypto';

export interface DpopKey {
  privateJwk: JsonWebKey;
  publicJwk: JsonWebKey;
}

export function newDpopKey(): DpopKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  return { privateJwk: privateKey.export({ format: 'jwk' }), publicJwk: { kty, crv, x, y } };
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A signer of proofs for one key: method, URL and (for resource requests) the access token's hash. */
export function proofSigner(key: DpopKey): (method: string, url: string, accessToken?: string) => string {
  const privateKey = createPrivateKey({ key: key.privateJwk, format: 'jwk' });
  const header = b64({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.publicJwk });
  return (method, url, accessToken) => {
    const ath = accessToken ? createHash('sha256').update(accessToken).digest('base64url') : undefined;
    const payload = b64({ htm: method, htu: url, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), ...(ath ? { ath } : {}) });
    const signature = sign('sha256', Buffer.from(`${header}.${payload}`), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    return `${header}.${payload}.${signature.toString('base64url')}`;
  };
}
