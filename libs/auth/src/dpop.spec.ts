import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK, type KeyLike } from 'jose';
import { createClient } from 'redis';
import { connectStore, MemoryStore } from '@trading/redis';
import { accessTokenHash, confirmedKey, dpopChallenge, DpopError, DpopNonces, DpopVerifier } from './dpop';

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

  describe('the request a proof names', () => {
    const good = (claims: Record<string, unknown>) => proofWith(key.privateKey, { jwk: key.jwk }, claims);

    it('refuses a proof whose iat is outside the window either way, and says by how much it may differ', async () => {
      const now = Math.floor(Date.now() / 1000);
      await expect(check(await good({ iat: now - 120 }))).rejects.toThrow("iat is more than 60 s from the server's time");
      await expect(check(await good({ iat: now + 120 }))).rejects.toThrow(/iat is more than 60 s/);
    });

    it('needs every claim that names the request: a proof without iat, htm or htu is refused', async () => {
      for (const claim of ['iat', 'htm', 'htu']) await expect(check(await good({ [claim]: undefined }))).rejects.toThrow(/invalid|htm|htu/);
      await expect(check(await good({ iat: undefined }))).rejects.toThrow(/missing required "iat" claim/);
    });

    it('compares htm with the method in upper case, whatever case the method arrives in', async () => {
      await expect(check(await good({ htm: 'POST' }))).rejects.toThrow("The DPoP proof's htm must be GET");
      await expect(check(await good({ htm: 'GET' }), { method: 'get' })).resolves.toBeDefined();
    });

    it('refuses a proof made for another URL, naming the one expected; with no URL configured it names none', async () => {
      await expect(check(await good({ htu: 'https://api.example/v1/orders' }))).rejects.toThrow(
        "The DPoP proof's htu must be the URL of this request (https://api.example/v1/accounts), without query or fragment",
      );
      await expect(check(await good({}), { urls: [] })).rejects.toThrow(
        "The DPoP proof's htu must be the URL of this request, without query or fragment",
      );
    });

    it('takes http URLs (a local deployment) but no other scheme, even one configured by mistake', async () => {
      const local = 'http://localhost:3000/v1/accounts';
      await expect(check(await good({ htu: local }), { urls: [local] })).resolves.toBeDefined();
      const ftp = 'ftp://api.example/v1/accounts';
      await expect(check(await good({ htu: ftp }), { urls: [URL_, ftp] })).rejects.toThrow(/htu/);
    });

    it('compares percent-escapes as RFC 3986 normalises them: unreserved ones decoded, the others in upper case', async () => {
      await expect(check(await good({ htu: 'https://api.example/v1/%61ccount%73' }))).resolves.toBeDefined();
      const slash = 'https://api.example/v1/a%2Fb';
      await expect(check(await good({ htu: 'https://api.example/v1/ab' }), { urls: [slash] })).rejects.toThrow(/htu/);
      await expect(check(await good({ htu: 'https://api.example/v1/a%2fb' }), { urls: [slash] })).resolves.toBeDefined();
      // An escaped reserved character is not the character itself.
      await expect(check(await good({ htu: 'https://api.example/v1/a/b' }), { urls: [slash] })).rejects.toThrow(/htu/);
    });

    it('refuses an htu that is not a string or is longer than 2,048 characters; 2,048 itself passes', async () => {
      await expect(check(await good({ htu: 42 }))).rejects.toThrow(/htu/);
      await expect(check(await good({ htu: [URL_] }))).rejects.toThrow(/htu/);
      const padded = (length: number) => `${URL_}?${'q'.repeat(length - URL_.length - 1)}`;
      await expect(check(await good({ htu: padded(2048) }))).resolves.toBeDefined();
      await expect(check(await good({ htu: padded(2049) }))).rejects.toThrow(/htu/);
    });

    it('needs a jti of 1 to 256 characters', async () => {
      await expect(check(await good({ jti: 7 }))).rejects.toThrow("The DPoP proof's jti must be a string of 1 to 256 characters");
      await expect(check(await good({ jti: '' }))).rejects.toThrow(/jti must be a string/);
      await expect(check(await good({ jti: ['j'] }))).rejects.toThrow(/jti must be a string/);
      await expect(check(await good({ jti: 'j'.repeat(256) }))).resolves.toBeDefined();
      await expect(check(await good({ jti: 'k'.repeat(257) }))).rejects.toThrow(/jti must be a string/);
    });
  });

  describe('the DPoP header', () => {
    it('is required: absent or empty', async () => {
      for (const proof of [undefined, ''])
        await expect(verifier.verify({ proof, method: 'GET', urls: [URL_] })).rejects.toThrow(
          'A DPoP proof (the DPoP request header) is required',
        );
    });

    it('holds at most 8,192 characters: a longer one is refused before its signature is looked at', async () => {
      const ofLength = (length: number) => `${'a'.repeat(length - 4)}.b.c`;
      await expect(check(ofLength(8192))).rejects.toThrow(/The DPoP proof is invalid/);
      await expect(check(ofLength(8193))).rejects.toThrow('The DPoP header must hold exactly one proof, a compact JWS');
    });

    it('names the algorithms a proof may use when its signature is refused', async () => {
      const error = await check('a.b.c').catch((err: unknown) => err);
      expect(error).toBeInstanceOf(DpopError);
      expect(error).toMatchObject({ name: 'DpopError', error: 'invalid_dpop_proof' });
      expect((error as Error).message).toContain('alg one of ES256, EdDSA, PS256');
    });

    it('refuses a proof signed with an algorithm outside the list, even a strong one', async () => {
      const p384 = await generateKeyPair('ES384', { extractable: true });
      await expect(check(await proofWith(p384.privateKey, { jwk: await exportJWK(p384.publicKey) }, {}, 'ES384'))).rejects.toThrow(
        /The DPoP proof is invalid/,
      );
    });
  });

  describe('server nonces at verification', () => {
    const nonces = new DpopNonces('secret', 300);

    it('asks for the nonce when the proof has none, says it expired when it is stale, and takes the current one', async () => {
      const t = Date.now() - 3_600_000;
      const noNonce = check(await proofWith(key.privateKey, { jwk: key.jwk }), { nonces });
      await expect(noNonce).rejects.toMatchObject({ error: 'use_dpop_nonce', message: expect.stringMatching(/A DPoP nonce is required/) });
      const stale = check(await proofWith(key.privateKey, { jwk: key.jwk }, { nonce: nonces.current(t) }), { nonces });
      await expect(stale).rejects.toMatchObject({ error: 'use_dpop_nonce', message: expect.stringMatching(/The DPoP nonce has expired/) });
      await expect(
        check(await proofWith(key.privateKey, { jwk: key.jwk }, { nonce: nonces.current() }), { nonces }),
      ).resolves.toBeDefined();
    });

    it('refuses a nonce that is not a string of 32 characters without comparing it', () => {
      const current = nonces.current();
      expect(nonces.accepts(current)).toBe(true);
      expect(nonces.accepts(current.slice(0, 31))).toBe(false);
      expect(nonces.accepts(`${current}x`)).toBe(false);
      expect(nonces.accepts(12345)).toBe(false);
    });
  });

  it('remembers a spent jti in Redis for twice the iat window and 5 s more', async () => {
    const prefix = `test:${randomUUID()}:`;
    const store = await connectStore(REDIS_URL, { keyPrefix: prefix });
    const raw = createClient({ url: REDIS_URL });
    await raw.connect();
    try {
      await new DpopVerifier(store).verify({ proof: await proofWith(key.privateKey, { jwk: key.jwk }), method: 'GET', urls: [URL_] });
      const keys = await raw.keys(`${prefix}dpop-jti:*`);
      expect(keys).toHaveLength(1);
      const ttl = await raw.ttl(keys[0]);
      expect(ttl).toBeGreaterThanOrEqual(124);
      expect(ttl).toBeLessThanOrEqual(125);
    } finally {
      await raw.close();
      await store.close();
    }
  });

  it('challenges with the realm, the algorithms and the error, quotes in the description made safe', () => {
    expect(dpopChallenge('invalid_dpop_proof', 'bad "htu" \\ here')).toBe(
      `DPoP realm="trading-api", algs="ES256 EdDSA PS256", error="invalid_dpop_proof", error_description="bad 'htu' ' here"`,
    );
  });

  it('reads cnf.jkt: absent (bearer), well-formed, or malformed', () => {
    expect(confirmedKey({})).toBeUndefined();
    expect(confirmedKey({ cnf: { jkt: 'A'.repeat(43) } })).toBe('A'.repeat(43));
    expect(confirmedKey({ cnf: { jkt: 42 } })).toBeNull();
    expect(confirmedKey({ cnf: 'x' })).toBeNull();
    expect(confirmedKey({ cnf: null })).toBeNull();
    expect(confirmedKey({ cnf: { jkt: 'short' } })).toBeNull();
    expect(confirmedKey({ cnf: { jkt: ['A'.repeat(43)] } })).toBeNull();
    expect(confirmedKey({ cnf: { jkt: 'A'.repeat(44) } })).toBeNull();
    expect(confirmedKey({ cnf: { jkt: `!${'A'.repeat(42)}` } })).toBeNull();
    expect(confirmedKey({ cnf: { jkt: `${'A'.repeat(42)}!` } })).toBeNull();
  });
});
