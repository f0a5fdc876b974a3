import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';

/**
 * Every service has its own ES256 key pair: its identity inside the platform. The private key
 * (SERVICE_KEY, a JWK) never leaves the service; the others know only its public key
 * (SERVICE_TRUSTED_KEYS, a JWKS). A key's `kid` is `<service>.<id>`, so a verifier knows
 * whose key it is without trusting anything the token says about itself.
 */
export const SERVICE_NAMES = ['rest-facade', 'gateway', 'auth', 'accounts', 'banking', 'oms'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export interface ServiceKey {
  service: ServiceName;
  kid: string;
  privateKey: KeyObject;
  /** The public half as a JWK, for the peers' trusted-keys set. */
  publicJwk: PublicJwk;
}

export interface PublicJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
  alg: 'ES256';
  use: 'sig';
}

const isServiceName = (value: string): value is ServiceName => (SERVICE_NAMES as readonly string[]).includes(value);

/** The service a `kid` belongs to, or undefined for a malformed one. */
function serviceOfKid(kid: string): ServiceName | undefined {
  const service = kid.slice(0, kid.lastIndexOf('.'));
  return isServiceName(service) ? service : undefined;
}

function toPublicJwk(privateKey: KeyObject, kid: string): PublicJwk {
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' }) as { x: string; y: string };
  return { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, kid, alg: 'ES256', use: 'sig' };
}

/** A fresh identity (all-in-one mode, tests, and `npm run service-keys` for deployments). */
export function generateServiceKey(service: ServiceName): ServiceKey {
  const kid = `${service}.${randomBytes(6).toString('hex')}`;
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { service, kid, privateKey, publicJwk: toPublicJwk(privateKey, kid) };
}

/** The private JWK (with its kid) as SERVICE_KEY holds it. */
export function exportServiceKey(key: ServiceKey): string {
  return JSON.stringify({ ...(key.privateKey.export({ format: 'jwk' }) as object), kid: key.kid, alg: 'ES256' });
}

/** Reads SERVICE_KEY; throws a message naming what is wrong (never the key itself). */
export function parseServiceKey(service: ServiceName, json: string): ServiceKey {
  let jwk: Record<string, unknown>;
  try {
    jwk = JSON.parse(json) as Record<string, unknown>;
  } catch {
    throw new Error('must be a private EC P-256 JWK in JSON');
  }
  const kid = typeof jwk['kid'] === 'string' ? jwk['kid'] : '';
  if (serviceOfKid(kid) !== service) throw new Error(`its kid must be "${service}.<id>"`);
  if (jwk['kty'] !== 'EC' || jwk['crv'] !== 'P-256' || typeof jwk['d'] !== 'string')
    throw new Error('must be a private EC P-256 JWK in JSON');
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: jwk as never, format: 'jwk' });
  } catch {
    throw new Error('is not a valid private EC P-256 JWK');
  }
  return { service, kid, privateKey, publicJwk: toPublicJwk(privateKey, kid) };
}

/** The peers' public keys by kid (SERVICE_TRUSTED_KEYS, a JWKS in JSON). */
export class TrustedServiceKeys {
  private readonly keys = new Map<string, { service: ServiceName; key: KeyObject }>();

  constructor(jwks: readonly PublicJwk[]) {
    for (const jwk of jwks) {
      const service = serviceOfKid(jwk.kid);
      if (!service) throw new Error(`key "${jwk.kid}" does not name a service (<service>.<id>)`);
      this.keys.set(jwk.kid, { service, key: createPublicKey({ key: jwk as never, format: 'jwk' }) });
    }
  }

  static parse(json: string): TrustedServiceKeys {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      throw new Error('must be a JWKS in JSON ({"keys":[…]})');
    }
    const keys = (parsed as { keys?: unknown })?.keys;
    if (!Array.isArray(keys)) throw new Error('must be a JWKS in JSON ({"keys":[…]})');
    for (const k of keys as Array<Record<string, unknown>>) {
      if (k?.['kty'] !== 'EC' || k?.['crv'] !== 'P-256' || typeof k?.['kid'] !== 'string')
        throw new Error('every key must be a public EC P-256 JWK with a kid');
      if ('d' in k) throw new Error(`key "${String(k['kid'])}" is a private key: publish only public keys`);
    }
    return new TrustedServiceKeys(keys as PublicJwk[]);
  }

  /** A JWKS of every key, e.g. to hand the same set to every service. */
  static of(...keys: ServiceKey[]): TrustedServiceKeys {
    return new TrustedServiceKeys(keys.map((k) => k.publicJwk));
  }

  get(kid: string): { service: ServiceName; key: KeyObject } | undefined {
    return this.keys.get(kid);
  }

  toJSON(): { keys: PublicJwk[] } {
    return {
      keys: [...this.keys.entries()].map(
        ([kid, { key }]) =>
          ({
            ...(key.export({ format: 'jwk' }) as { x: string; y: string }),
            kty: 'EC',
            crv: 'P-256',
            kid,
            alg: 'ES256',
            use: 'sig',
          }) as PublicJwk,
      ),
    };
  }
}

/**
 * A symmetric key for one purpose (cursors, …) derived from the service's private key, so a
 * service needs one secret, and no derived key is ever valid for another purpose.
 */
export function deriveServiceSecret(key: ServiceKey, purpose: string): string {
  const d = (key.privateKey.export({ format: 'jwk' }) as { d: string }).d;
  return createHmac('sha256', Buffer.from(d, 'base64url')).update(`trading-api:${purpose}`).digest('hex');
}
