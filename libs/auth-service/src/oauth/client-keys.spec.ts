import type { LookupFunction } from 'node:net';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, type JWTVerifyGetKey } from 'jose';
import { startHttpsTestServer, type HttpsTestServer } from '@trading/testing';
import { ClientKeySets, JWKS_MAX_BYTES, JwksUriFailure } from './client-keys';

const newKey = async () => {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = `k-${Math.random().toString(36).slice(2)}`;
  return { privateKey, kid, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
};
type SigningKey = Awaited<ReturnType<typeof newKey>>;
/** What the test server answers for a path: a response, 'silent' (never answers), or undefined (the published set). */
type Answer = { status: number; body: string; headers?: Record<string, string> } | 'silent' | undefined;

/** A resolver that answers `address` for every name, as a hostile or rebinding DNS server would. */
const resolvingTo =
  (address: string): LookupFunction =>
  (_host, options, callback) =>
    options.all
      ? callback(null, [{ address, family: address.includes(':') ? 6 : 4 }])
      : callback(null, address, address.includes(':') ? 6 : 4);

describe('client key sets fetched from a jwks_uri', () => {
  let server: HttpsTestServer;
  let answer: (path: string) => Answer;
  let signing: SigningKey;
  let published: Array<SigningKey['jwk']>;
  const sets: ClientKeySets[] = [];
  const keySets = (allowLoopback: boolean, resolve?: LookupFunction) => {
    const set = new ClientKeySets({ allowLoopback, ca: server.ca, resolve });
    sets.push(set);
    return set;
  };
  const signedBy = (key: SigningKey) =>
    new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: key.kid }).setIssuer('c').setExpirationTime('1m').sign(key.privateKey);
  /** Verifies a token signed by `key` with the keys at `uri`: 'ok', or why not. */
  const verifyWith = async (set: ClientKeySets, uri: string, key = signing) => {
    try {
      await jwtVerify(await signedBy(key), set.keysOf({ jwks: null, jwksUri: uri }) as JWTVerifyGetKey);
      return 'ok';
    } catch (err) {
      return err instanceof JwksUriFailure ? `${err.transient ? 'transient' : 'refused'}: ${err.message}` : (err as Error).constructor.name;
    }
  };

  beforeAll(async () => {
    signing = await newKey();
    published = [signing.jwk];
    server = await startHttpsTestServer(
      (req, res) => {
        const custom = answer(req.url ?? '');
        if (custom === 'silent') return;
        const { status, body, headers } = custom ?? { status: 200, body: JSON.stringify({ keys: published }) };
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
      },
      ['keys.vendor.example'],
    );
  });
  beforeEach(() => {
    answer = () => undefined;
  });
  afterAll(async () => {
    await Promise.all(sets.map((s) => s.close()));
    await server.close();
  });

  it('attack: a jwks_uri leading to loopback, by address or by name, is never connected to', async () => {
    const set = keySets(false, resolvingTo('127.0.0.1'));
    const before = server.connections;
    for (const uri of [
      `https://127.0.0.1:${server.port}/jwks`,
      `https://[::1]:${server.port}/jwks`,
      `https://[::ffff:127.0.0.1]:${server.port}/jwks`,
      // A name that resolves to this machine when auth connects, whatever it resolved to before.
      `https://keys.vendor.example:${server.port}/jwks`,
    ])
      expect([uri, await verifyWith(set, uri)]).toEqual([uri, expect.stringMatching(/^refused: .*not lead to a public address/)]);
    // The system resolver too: localhost is loopback.
    expect(await verifyWith(keySets(false), `https://localhost:${server.port}/jwks`)).toMatch(/^refused: /);
    expect(server.connections).toBe(before);
  });

  it('attack: private, link-local and metadata addresses are refused even where loopback is allowed', async () => {
    for (const address of ['10.0.0.8', '169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '0.0.0.0']) {
      const set = keySets(true, resolvingTo(address));
      expect([address, await verifyWith(set, `https://keys.vendor.example:${server.port}/jwks`)]).toEqual([
        address,
        expect.stringMatching(/^refused: /),
      ]);
    }
    expect(await verifyWith(keySets(true), 'https://169.254.169.254/latest/meta-data/jwks')).toMatch(/^refused: /);
  });

  it('with loopback allowed (DEV), fetches the set over https, by address or by name, and keeps it', async () => {
    const set = keySets(true, resolvingTo('127.0.0.1'));
    const before = server.requests;
    expect(await verifyWith(set, `https://127.0.0.1:${server.port}/jwks`)).toBe('ok');
    expect(await verifyWith(set, `https://127.0.0.1:${server.port}/jwks`)).toBe('ok');
    expect(await verifyWith(set, `https://keys.vendor.example:${server.port}/jwks`)).toBe('ok');
    expect(server.requests - before).toBe(2);
  });

  it('fetches again for an unknown kid at most once per interval, and after the max age', async () => {
    const set = keySets(true);
    const uri = `https://127.0.0.1:${server.port}/jwks?rotation`;
    expect(await verifyWith(set, uri)).toBe('ok');
    const before = server.requests;
    const rotated = await newKey();
    published = [signing.jwk, rotated.jwk];
    try {
      // Just fetched: an unknown kid is not worth another request yet.
      expect(await verifyWith(set, uri, rotated)).toBe('JWKSNoMatchingKey');
      expect(server.requests).toBe(before);
      const now = Date.now();
      const clock = jest.spyOn(Date, 'now').mockReturnValue(now + 31_000);
      expect(await verifyWith(set, uri, rotated)).toBe('ok');
      expect(server.requests).toBe(before + 1);
      clock.mockReturnValue(now + 6 * 60_000);
      expect(await verifyWith(set, uri)).toBe('ok');
      expect(server.requests).toBe(before + 2);
      clock.mockRestore();
    } finally {
      published = [signing.jwk];
    }
  });

  it('attack: follows no redirect, reads at most 64 KiB, and does not wait past its timeout', async () => {
    const set = keySets(true);
    const before = server.requests;
    answer = (path) =>
      path.startsWith('/moved') ? { status: 302, body: '', headers: { location: 'https://169.254.169.254/latest/meta-data/' } } : undefined;
    expect(await verifyWith(set, `https://127.0.0.1:${server.port}/moved`)).toMatch(/^refused: .*redirects are not followed/);
    expect(server.requests - before).toBe(1);

    answer = () => ({ status: 200, body: JSON.stringify({ keys: published, padding: 'x'.repeat(JWKS_MAX_BYTES) }) });
    expect(await verifyWith(set, `https://127.0.0.1:${server.port}/large`)).toBe('refused: the jwks_uri answered more than 64 KiB');
    // Streamed without a length, the same.
    answer = () => ({
      status: 200,
      body: JSON.stringify({ keys: published, padding: 'x'.repeat(JWKS_MAX_BYTES) }),
      headers: { 'transfer-encoding': 'chunked' },
    });
    expect(await verifyWith(set, `https://127.0.0.1:${server.port}/streamed`)).toBe('refused: the jwks_uri answered more than 64 KiB');
    answer = () => ({ status: 200, body: 'not json' });
    expect(await verifyWith(set, `https://127.0.0.1:${server.port}/text`)).toMatch(/^refused: .*not answer JSON/);

    answer = () => 'silent';
    const started = Date.now();
    expect(await verifyWith(set, `https://127.0.0.1:${server.port}/silent`)).toBe('transient: the jwks_uri could not be read');
    expect(Date.now() - started).toBeLessThan(4500);
  }, 15_000);
});
