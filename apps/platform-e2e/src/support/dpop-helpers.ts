import { createHash, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK, type KeyLike } from 'jose';
import { http } from '@trading/testing';

/**
 * A client's DPoP key (P-256, made with jose), and the proofs it signs (RFC 9449): written here,
 * apart from the platform's verifier, so the tests check the server against the standard.
 */
export class DpopKey {
  private constructor(
    private readonly privateKey: KeyLike,
    readonly jwk: JWK,
    readonly jkt: string,
  ) {}

  static async generate(): Promise<DpopKey> {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    return new DpopKey(privateKey, jwk, await calculateJwkThumbprint(jwk, 'sha256'));
  }

  proof(
    method: string,
    url: string,
    options: { accessToken?: string; nonce?: string; iat?: number; jti?: string; omitAth?: boolean; signedBy?: DpopKey } = {},
  ): Promise<string> {
    const ath = options.accessToken && !options.omitAth ? createHash('sha256').update(options.accessToken).digest('base64url') : undefined;
    const signer = options.signedBy ?? this;
    return new SignJWT({ htm: method, htu: url, ...(ath ? { ath } : {}), ...(options.nonce ? { nonce: options.nonce } : {}) })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: signer.jwk })
      .setJti(options.jti ?? randomUUID())
      .setIssuedAt(options.iat ?? Math.floor(Date.now() / 1000))
      .sign(signer.privateKey);
  }
}

/** A port nobody listens on now: the DPoP URLs (htu) must be known before the platform listens. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** An API call with `Authorization: DPoP <token>` and, when given, its proof. */
export const dpopCall = (method: string, url: string, token: string, proof: string | undefined, body?: unknown) =>
  http(method, url, { body, headers: { authorization: `DPoP ${token}`, ...(proof ? { dpop: proof } : {}) } });
