import { createHash, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type KeyLike } from 'jose';
import { createClient } from 'redis';
import { connectStore, type KeyValueStore } from '@trading/redis';
import { startHttpsTestServer, type HttpsTestServer } from '@trading/testing';
import type { Client, VendorApp } from '../registry/registry.service';
import { assertionIssuer, clientAssertionProblem, JWT_BEARER_ASSERTION } from './client-assertion';
import { ClientKeySets } from './client-keys';
import type { OAuthContext } from './context';
import { OAuthError } from './errors';

const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const ISSUER = 'https://login.broker.example';
const CLIENT_ID = 'vendor-app-1';

type Alg = 'ES256' | 'PS256' | 'EdDSA' | 'RS256';
interface SigningKey {
  alg: Alg;
  kid: string;
  privateKey: KeyLike;
  jwk: Record<string, unknown>;
}

const newKey = async (alg: Alg): Promise<SigningKey> => {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  const kid = `${alg}-${randomUUID()}`;
  return { alg, kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
};

const app: VendorApp = {
  id: randomUUID(),
  companyName: 'Vendor Ltd',
  businessEmail: 'ops@vendor.example',
  country: 'GB',
  appName: 'Vendor App',
  description: null,
  logoUrl: 'https://vendor.example/logo.png',
  homepageUrl: 'https://vendor.example',
  supportEmail: 'support@vendor.example',
  privacyPolicyUrl: 'https://vendor.example/privacy',
  termsOfServiceUrl: 'https://vendor.example/terms',
  requestedScopes: ['openid'],
  approvedScopes: ['openid'],
  status: 'ACTIVE',
  environment: 'DEV',
  createdAt: new Date(),
  suspendedAt: null,
};

const clientWith = (overrides: Partial<Client>): Client => ({
  clientId: CLIENT_ID,
  environment: 'DEV',
  redirectUris: ['https://vendor.example/callback'],
  app,
  tokenEndpointAuthMethod: 'private_key_jwt',
  jwks: null,
  jwksUri: null,
  requirePushedAuthorizationRequests: false,
  dpopBoundAccessTokens: false,
  dpopNonceRequired: false,
  requireSecondFactor: false,
  subjectSecret: 'subject-secret',
  ...overrides,
});

/** Claims of an acceptable assertion for `clientId` made at `now`; a claim given as undefined is left out. */
const claimsAt = (now: number, clientId = CLIENT_ID): Record<string, unknown> => ({
  iss: clientId,
  sub: clientId,
  aud: ISSUER,
  iat: now,
  exp: now + 120,
  jti: randomUUID(),
});

const sign = (key: SigningKey, claims: Record<string, unknown>) =>
  new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid }).sign(key.privateKey);

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * Runs `fn` with Date.now stopped, handing it the second the code under test reads as "now":
 * an assertion exactly at a bound is then judged at the second it was made for.
 */
async function atFrozenSecond<T>(fn: (now: number) => Promise<T>): Promise<T> {
  const ms = Date.now();
  const clock = jest.spyOn(Date, 'now').mockReturnValue(ms);
  try {
    return await fn(Math.floor(ms / 1000));
  } finally {
    clock.mockRestore();
  }
}

const jtiKey = (clientId: string, jti: string) =>
  `oauth-assertion-jti:${createHash('sha256').update(`${clientId}\n${jti}`).digest('base64url')}`;

const b64Length = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url').length;

/** An ES256-signed JWT whose `iss` is `iss`, exactly `length` characters long (padded by a claim and, when needed, the kid). */
async function signedJwtOfLength(key: SigningKey, iss: string, length: number): Promise<string> {
  const signatureLength = 86; // 64 bytes of ES256 signature, base64url
  for (let kidLength = 1; kidLength <= 8; kidLength++) {
    const header = { alg: 'ES256', kid: 'k'.repeat(kidLength) };
    const payloadLength = length - b64Length(header) - 2 - signatureLength;
    const estimate = Math.floor((payloadLength * 3) / 4) - JSON.stringify({ iss, pad: '' }).length;
    for (let n = Math.max(0, estimate - 4); n <= estimate + 4; n++) {
      const payload = { iss, pad: 'x'.repeat(n) };
      if (b64Length(payload) === payloadLength) return new SignJWT(payload).setProtectedHeader(header).sign(key.privateKey);
    }
  }
  throw new Error(`no JWT of length ${length}`);
}

describe('assertionIssuer', () => {
  let key: SigningKey;
  beforeAll(async () => {
    key = await newKey('ES256');
  });

  it('reads the iss of a JWT before anything is verified', async () => {
    expect(assertionIssuer(await sign(key, { iss: CLIENT_ID }))).toBe(CLIENT_ID);
  });

  it('reads an assertion of up to 8192 characters, and none longer', async () => {
    const longest = await signedJwtOfLength(key, CLIENT_ID, 8192);
    const tooLong = await signedJwtOfLength(key, CLIENT_ID, 8193);
    expect(longest).toHaveLength(8192);
    expect(tooLong).toHaveLength(8193);
    expect(assertionIssuer(longest)).toBe(CLIENT_ID);
    expect(assertionIssuer(tooLong)).toBeNull();
  });

  it('is null for what is not a JWT', () => {
    expect(assertionIssuer('not a jwt')).toBeNull();
    expect(assertionIssuer('')).toBeNull();
    expect(assertionIssuer('a.b.c')).toBeNull();
  });

  it('reads an iss of up to 100 characters, and none longer', async () => {
    const iss100 = 'i'.repeat(100);
    expect(assertionIssuer(await sign(key, { iss: iss100 }))).toBe(iss100);
    expect(assertionIssuer(await sign(key, { iss: 'i'.repeat(101) }))).toBeNull();
  });

  it('is null when iss is not a string, or missing', async () => {
    expect(assertionIssuer(await sign(key, { iss: 42 }))).toBeNull();
    expect(assertionIssuer(await sign(key, { iss: [CLIENT_ID] }))).toBeNull();
    expect(assertionIssuer(await sign(key, { sub: CLIENT_ID }))).toBeNull();
  });
});

describe('clientAssertionProblem (private_key_jwt)', () => {
  let store: KeyValueStore;
  let prefix: string;
  let server: HttpsTestServer;
  let clientKeys: ClientKeySets;
  let ctx: OAuthContext;
  let es256: SigningKey;
  let ps256: SigningKey;
  let eddsa: SigningKey;
  let rs256: SigningKey;
  let unregistered: SigningKey;
  let client: Client;
  /** The set the test server publishes at /jwks. */
  let published: Array<Record<string, unknown>>;

  beforeAll(async () => {
    prefix = `test:${randomUUID()}:`;
    store = await connectStore(REDIS_URL, { keyPrefix: prefix });
    [es256, ps256, eddsa, rs256, unregistered] = await Promise.all([
      newKey('ES256'),
      newKey('PS256'),
      newKey('EdDSA'),
      newKey('RS256'),
      newKey('ES256'),
    ]);
    published = [es256.jwk];
    server = await startHttpsTestServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      const status = path === '/jwks' ? 200 : path === '/gone' ? 404 : 500;
      res.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? JSON.stringify({ keys: published }) : '{}');
    });
    // Loopback allowed (as in DEV) so that the jwks_uri can be this test's own https server.
    clientKeys = new ClientKeySets({ allowLoopback: true, ca: server.ca });
    // Only the settings' issuer, the client keys and the store are used by this function: the rest of the context is left out.
    ctx = { clientKeys, settings: { issuer: ISSUER }, store } as unknown as OAuthContext;
    client = clientWith({ jwks: { keys: [es256.jwk, ps256.jwk, eddsa.jwk] } });
  });

  afterAll(async () => {
    await clientKeys.close();
    await server.close();
    await store.close();
  });

  /** Signs `claims` (the acceptable ones made now, changed by `change`) with `key` and checks it for `who`. */
  const check = async (change: Record<string, unknown> = {}, key = es256, who = client, now = nowSeconds()) => {
    const claims = { ...claimsAt(now, who.clientId), ...change };
    for (const name of Object.keys(claims)) if (claims[name] === undefined) delete claims[name];
    return clientAssertionProblem(ctx, who, await sign(key, claims));
  };

  it('names the assertion type of RFC 7523', () => {
    expect(JWT_BEARER_ASSERTION).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
  });

  it('accepts an assertion signed with a registered ES256, PS256 or EdDSA key', async () => {
    expect(await check({}, es256)).toBeNull();
    expect(await check({}, ps256)).toBeNull();
    expect(await check({}, eddsa)).toBeNull();
  });

  it('refuses a client not registered for private_key_jwt, even with keys', async () => {
    for (const method of ['client_secret_basic', 'client_secret_post'] as const)
      expect(await check({}, es256, { ...client, tokenEndpointAuthMethod: method })).toBe(
        'this client is not registered for private_key_jwt',
      );
  });

  it('refuses when the client has neither registered keys nor a jwks_uri', async () => {
    expect(await check({}, es256, { ...client, jwks: null, jwksUri: null })).toBe('this client has no registered keys');
  });

  it('refuses an RS256 signature, even by a registered RS256 key', async () => {
    const rsaClient = clientWith({ clientId: 'vendor-rsa', jwks: { keys: [rs256.jwk] } });
    expect(await check({}, rs256, rsaClient)).toBe('the client assertion is not a valid signed JWT');
  });

  it('refuses an iss or sub other than the client_id, or missing', async () => {
    expect(await check({ iss: 'someone-else' })).toBe("the client assertion's iss claim is not acceptable");
    expect(await check({ sub: 'someone-else' })).toBe("the client assertion's sub claim is not acceptable");
    expect(await check({ iss: undefined })).toBe("the client assertion's iss claim is not acceptable");
    expect(await check({ sub: undefined })).toBe("the client assertion's sub claim is not acceptable");
  });

  it('requires aud, exp, iat and jti', async () => {
    for (const claim of ['aud', 'exp', 'iat', 'jti'])
      expect([claim, await check({ [claim]: undefined })]).toEqual([claim, `the client assertion's ${claim} claim is not acceptable`]);
  });

  it('refuses an expired assertion, and accepts one expired less than the clock skew ago', async () => {
    expect(await check({ iat: nowSeconds() - 120, exp: nowSeconds() - 60 })).toBe('the client assertion has expired');
    expect(await check({ iat: nowSeconds() - 120, exp: nowSeconds() - 20 })).toBeNull();
  });

  it('refuses a signature by a key the client has not registered', async () => {
    // A kid the client's set lacks.
    expect(await check({}, unregistered)).toBe("the client assertion is not signed by one of the client's registered keys");
    // A registered kid, signed by another key.
    expect(await check({}, { ...unregistered, kid: es256.kid })).toBe(
      "the client assertion is not signed by one of the client's registered keys",
    );
  });

  it('refuses what is not a signed JWT', async () => {
    expect(await clientAssertionProblem(ctx, client, 'not a jwt')).toBe('the client assertion is not a valid signed JWT');
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claimsAt(nowSeconds()))).toString('base64url')}.`;
    expect(await clientAssertionProblem(ctx, client, unsigned)).toBe('the client assertion is not a valid signed JWT');
  });

  it("accepts only this server's issuer identifier, alone, as a string, for aud", async () => {
    const message = `the client assertion's aud claim must be this server's issuer identifier alone, as a string (${ISSUER})`;
    expect(await check({ aud: `${ISSUER}/oauth/token` })).toBe(message);
    expect(await check({ aud: [ISSUER] })).toBe(message);
    expect(await check({ aud: [ISSUER, 'https://other.example'] })).toBe(message);
    expect(await check({ aud: 'https://other.example' })).toBe(message);
    expect(await check({ aud: ISSUER })).toBeNull();
  });

  it('accepts an iat up to 60 s ahead of the clock, and refuses 61 s', async () => {
    expect(await atFrozenSecond((now) => check({ iat: now + 60 }, es256, client, now))).toBeNull();
    expect(await atFrozenSecond((now) => check({ iat: now + 61 }, es256, client, now))).toBe(
      "the client assertion's iat must not be more than 60 seconds ahead of the server's clock",
    );
  });

  it('accepts an exp up to 300 s (and the 30 s skew) ahead, and refuses one a second later', async () => {
    expect(await atFrozenSecond((now) => check({ exp: now + 330 }, es256, client, now))).toBeNull();
    expect(await atFrozenSecond((now) => check({ exp: now + 331 }, es256, client, now))).toBe(
      "the client assertion's exp must be at most 300 seconds ahead",
    );
  });

  it('requires a jti of 1 to 200 characters, as a string', async () => {
    const message = "the client assertion's jti must be a string of 1 to 200 characters";
    expect(await check({ jti: '' })).toBe(message);
    expect(await check({ jti: 'j' })).toBeNull();
    expect(await check({ jti: `${randomUUID()}${'j'.repeat(164)}` })).toBeNull();
    expect(await check({ jti: `${randomUUID()}${'j'.repeat(165)}` })).toBe(message);
    expect(await check({ jti: 42 })).toBe(message);
    expect(await check({ jti: [randomUUID()] })).toBe(message);
  });

  it('accepts a jti once per client: the same assertion again is refused, another client is not affected', async () => {
    const jti = randomUUID();
    const now = nowSeconds();
    const assertion = await sign(es256, { ...claimsAt(now), jti });
    expect(await clientAssertionProblem(ctx, client, assertion)).toBeNull();
    expect(await clientAssertionProblem(ctx, client, assertion)).toBe('the client assertion was already used (jti replayed)');
    // A new assertion with the same jti is a replay too.
    expect(await check({ jti })).toBe('the client assertion was already used (jti replayed)');
    // Another client may use the same jti once.
    const other = clientWith({ clientId: 'vendor-app-2', jwks: { keys: [eddsa.jwk] } });
    expect(await check({ jti }, eddsa, other)).toBeNull();
    expect(await check({ jti }, eddsa, other)).toBe('the client assertion was already used (jti replayed)');
    // And the first client's next jti is fresh.
    expect(await check({}, es256, client)).toBeNull();
  });

  it("keeps the jti for the assertion's remaining lifetime and 30 s more, under the client and the jti", async () => {
    const raw = createClient({ url: REDIS_URL });
    await raw.connect();
    try {
      const jti = randomUUID();
      expect(await atFrozenSecond((now) => check({ jti, exp: now + 200 }, es256, client, now))).toBeNull();
      const ttl = await raw.ttl(`${prefix}${jtiKey(CLIENT_ID, jti)}`);
      expect(ttl).toBeGreaterThanOrEqual(228);
      expect(ttl).toBeLessThanOrEqual(230);

      // Expired less than the skew ago: kept until it could no longer be accepted.
      const late = randomUUID();
      expect(await atFrozenSecond((now) => check({ jti: late, iat: now - 100, exp: now - 20 }, es256, client, now))).toBeNull();
      const lateTtl = await raw.ttl(`${prefix}${jtiKey(CLIENT_ID, late)}`);
      expect(lateTtl).toBeGreaterThanOrEqual(8);
      expect(lateTtl).toBeLessThanOrEqual(10);
    } finally {
      await raw.close();
    }
  });

  describe('with keys published at a jwks_uri', () => {
    const uriClient = (path: string) =>
      clientWith({ clientId: `vendor-uri-${randomUUID()}`, jwks: null, jwksUri: `https://127.0.0.1:${server.port}${path}` });

    it('accepts an assertion signed by a published key', async () => {
      expect(await check({}, es256, uriClient(`/jwks?${randomUUID()}`))).toBeNull();
    });

    it('refuses, without a 503, an assertion the published keys do not verify, or not a JWT', async () => {
      const who = uriClient(`/jwks?${randomUUID()}`);
      expect(await check({}, unregistered, who)).toBe("the client assertion is not signed by one of the client's registered keys");
      expect(await check({ exp: nowSeconds() - 60 }, es256, who)).toBe('the client assertion has expired');
      expect(await clientAssertionProblem(ctx, who, 'not a jwt')).toBe('the client assertion is not a valid signed JWT');
    });

    it("fails the assertion with the reason when the jwks_uri is the client's own fault", async () => {
      expect(await check({}, es256, uriClient(`/gone?${randomUUID()}`))).toBe('the jwks_uri answered 404, not 200');
      const plain = clientWith({ clientId: 'vendor-http', jwks: null, jwksUri: 'http://vendor.example/jwks' });
      expect(await check({}, es256, plain)).toBe('the registered jwks_uri is not an https URL');
    });

    it('answers 503 temporarily_unavailable, retry after 5 s, when the jwks_uri server fails', async () => {
      const who = uriClient(`/down?${randomUUID()}`);
      const error = await check({}, es256, who).then(
        (value) => value,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(OAuthError);
      expect(error).toMatchObject({
        error: 'temporarily_unavailable',
        description: "The client's jwks_uri could not be read; retry shortly",
        status: 503,
        headers: { 'Retry-After': '5' },
      });
      expect((error as OAuthError).headers).toEqual({ 'Retry-After': '5' });
    });
  });
});
