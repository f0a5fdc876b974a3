import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK, type KeyLike } from 'jose';
import { connectStore, MemoryStore } from '@trading/redis';
import { accessTokenHash, confirmedKey, DpopNonces, DpopVerifier } from './dpop';

const URL_ = 'https://api.example/v1/accounts';
// The test Redis, as libs/testing names it (which this library cannot import: libs/testing imports it).
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

async function proofWith(
  privateKey: KeyLike,
  header: Record<string, unknown>,
  claims: Record<string, unknown> = {},
  alg = 'ES256',
): Promise<string> {
  return new SignJWT({ htm: 'GET', htu: URL_, jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })
    .setProtectedHeader({ alg, typ: 'dpop+jwt', ...header })
    .sign(privateKey);
}

/** The proof checks that the e2e spec (oauth-dpop.spec.ts) does not reach over HTTP. */
describe('DPoP proofs (RFC 9449)', () => {
  let key: { privateKey: KeyLike; jwk: JWK };
  const verifier = new DpopVerifier(new MemoryStore());
  const check = (proof: string, extra: Partial<Parameters<DpopVerifier['verify']>[0]> = {}) =>
    verifier.verify({ proof, method: 'GET', urls: [URL_], ...extra });

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    key = { privateKey, jwk: await exportJWK(publicKey) };
  });

  it('accepts a good proof once, and answers the key thumbprint; htu compared without query, case of host or default port', async () => {
    const proof = await proofWith(key.privateKey, { jwk: key.jwk }, { htu: 'https://API.example:443/v1/accounts?x=1' });
    await expect(check(proof)).resolves.toEqual({ jkt: await calculateJwkThumbprint(key.jwk), jti: expect.any(String) });
    await expect(check(proof)).rejects.toMatchObject({ error: 'invalid_dpop_proof', message: expect.stringMatching(/used before/) });
  });

  it('refuses a private key in the header, a wrong typ, a symmetric alg, a missing claim, a non-URL htu', async () => {
    const privateJwk = await exportJWK(key.privateKey);
    await expect(check(await proofWith(key.privateKey, { jwk: privateJwk }))).rejects.toMatchObject({ error: 'invalid_dpop_proof' });
    await expect(check(await proofWith(key.privateKey, { jwk: key.jwk, typ: 'JWT' }))).rejects.toThrow(/typ/);
    const secret = new TextEncoder().encode('s'.repeat(32));
    await expect(check(await proofWith(secret as unknown as KeyLike, { jwk: { kty: 'oct', k: 'c2Vj' } }, {}, 'HS256'))).rejects.toThrow(
      /invalid/,
    );
    await expect(check(await proofWith(key.privateKey, { jwk: key.jwk }, { jti: undefined }))).rejects.toThrow(/jti/);
    await expect(check(await proofWith(key.privateKey, { jwk: key.jwk }, { htu: 'not a url' }))).rejects.toThrow(/htu/);
    await expect(check('a.b.c, d.e.f')).rejects.toThrow(/exactly one proof/);
  });

  it('refuses a proof signed RS256 (outside the algorithms FAPI 2.0 allows); PS256 with the same RSA key passes', async () => {
    const rsa = await generateKeyPair('PS256', { extractable: true });
    const jwk = await exportJWK(rsa.publicKey);
    await expect(check(await proofWith(rsa.privateKey, { jwk }, {}, 'RS256'))).rejects.toMatchObject({ error: 'invalid_dpop_proof' });
    await expect(check(await proofWith(rsa.privateKey, { jwk }, {}, 'PS256'))).resolves.toMatchObject({ jkt: expect.any(String) });
  });

  it('attack: a proof dated as far ahead as the window allows stays spent in Redis for as long as its iat passes', async () => {
    // A proof passes the iat check from `window` before its iat to `window` after it, so its jti
    // must be remembered for the whole span, not only for a window from its first use.
    const store = await connectStore(REDIS_URL, { keyPrefix: `test:${randomUUID()}:` });
    try {
      const window = 2;
      const shared = new DpopVerifier(store, window);
      const ahead = await proofWith(key.privateKey, { jwk: key.jwk }, { iat: Math.floor(Date.now() / 1000) + window });
      await expect(shared.verify({ proof: ahead, method: 'GET', urls: [URL_] })).resolves.toBeDefined();
      await new Promise((r) => setTimeout(r, (window + 1) * 1000)); // past one window, its iat still within the next
      await expect(shared.verify({ proof: ahead, method: 'GET', urls: [URL_] })).rejects.toMatchObject({
        error: 'invalid_dpop_proof',
        message: expect.stringMatching(/used before/),
      });
      // The client's next, fresh proof of the same key is not held up by the spent one.
      await expect(
        shared.verify({ proof: await proofWith(key.privateKey, { jwk: key.jwk }), method: 'GET', urls: [URL_] }),
      ).resolves.toBeDefined();
    } finally {
      await store.close();
    }
  });

  it('checks ath and the bound key when asked to', async () => {
    const token = 'header.payload.signature';
    const jkt = await calculateJwkThumbprint(key.jwk);
    await expect(
      check(await proofWith(key.privateKey, { jwk: key.jwk }, { ath: accessTokenHash(token) }), { accessToken: token, jkt }),
    ).resolves.toBeDefined();
    await expect(check(await proofWith(key.privateKey, { jwk: key.jwk }), { accessToken: token, jkt })).rejects.toThrow(/ath/);
    await expect(
      check(await proofWith(key.privateKey, { jwk: key.jwk }, { ath: accessTokenHash(token) }), {
        accessToken: token,
        jkt: 'A'.repeat(43),
      }),
    ).rejects.toThrow(/another key/);
  });

  it('nonces are the same on every instance with the secret, rotate, and are accepted for one period more', () => {
    const a = new DpopNonces('secret', 300);
    const b = new DpopNonces('secret', 300);
    const t = 1_700_000_000_000;
    expect(a.current(t)).toBe(b.current(t));
    expect(b.accepts(a.current(t), t + 300_000)).toBe(true);
    expect(b.accepts(a.current(t), t + 600_000)).toBe(false);
    expect(new DpopNonces('other', 300).accepts(a.current(t), t)).toBe(false);
    expect(a.current(t + 600_000)).not.toBe(a.current(t));
  });

  it('reads cnf.jkt: absent (bearer), well-formed, or malformed', () => {
    expect(confirmedKey({})).toBeUndefined();
    expect(confirmedKey({ cnf: { jkt: 'A'.repeat(43) } })).toBe('A'.repeat(43));
    expect(confirmedKey({ cnf: { jkt: 42 } })).toBeNull();
    expect(confirmedKey({ cnf: 'x' })).toBeNull();
  });
});
