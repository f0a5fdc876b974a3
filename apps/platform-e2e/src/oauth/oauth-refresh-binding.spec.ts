import { decodeJwt } from 'jose';
import { http } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { dpopCall, DpopKey, freePort } from '../support/dpop-helpers';
import { authorizationCode, provisionApp, type ProvisionedApp } from '../support/oauth-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };

interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: string;
}

/**
 * A grant's kind (DPoP or bearer) is fixed when the code is exchanged; the refresh token itself is
 * bound to no key (a confidential client, RFC 9449 §5), and each refresh binds its access token to
 * the key it proves. The retry window keeps that binding: only the client's own retry (same
 * client, the key its first refresh proved, or no proof for a bearer grant) gets the pair a
 * refresh already handed out. A thief holding a stolen refresh token and the client's
 * credentials, with a DPoP key of its own, can neither bind a bearer grant to its key nor take or
 * plant a pair inside the window; replaying a spent token under another binding ends the grant.
 */
describe('Refresh tokens keep their grant’s DPoP kind, and the retry window the key of the first refresh', () => {
  let p: TestPlatform;
  let app: ProvisionedApp;
  let api: string;
  let tokenUrl: string;

  beforeAll(async () => {
    const facadePort = await freePort();
    p = await startTestPlatform({ FACADE_PORT: String(facadePort) });
    // The public URL the platform was told: what proofs name as htu.
    api = `http://localhost:${facadePort}/v1`;
    tokenUrl = `${api}/oauth/token`;
    app = await provisionApp(p, { scopes: ['read:accounts'] });
  }, 60_000);
  afterAll(() => p?.stop());

  /** A token request with the app's credentials (which the thief holds too), with a proof of `key` when given. */
  const tokenRequest = async (params: Record<string, string>, key?: DpopKey) =>
    http('POST', tokenUrl, {
      body: { client_id: app.clientId, client_secret: app.clientSecret, ...params },
      headers: key ? { dpop: await key.proof('POST', tokenUrl) } : {},
    });
  const refresh = (refreshToken: string, key?: DpopKey) => tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken }, key);

  /** Sign-in, consent, and the code exchanged: with a proof of `key` (a DPoP-bound grant) or without (a bearer grant). */
  async function grant(key?: DpopKey): Promise<TokenPair> {
    const c = await authorizationCode(p, app, alice, 'read:accounts');
    const res = await tokenRequest(
      { grant_type: 'authorization_code', code: c.code, redirect_uri: c.redirectUri, code_verifier: c.verifier },
      key,
    );
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe(key ? 'DPoP' : 'Bearer');
    return res.body as TokenPair;
  }

  /** GET /accounts with the access token: as a bearer token, or with a fresh proof of `key`. */
  const accounts = async (accessToken: string, key?: DpopKey) => {
    const url = `${api}/accounts`;
    const res = key
      ? await dpopCall('GET', url, accessToken, await key.proof('GET', url, { accessToken }))
      : await http('GET', url, { token: accessToken });
    return res.status;
  };
  const boundTo = (accessToken: string) => (decodeJwt(accessToken)['cnf'] as { jkt?: string } | undefined)?.jkt;
  const revoked = (res: { status: number; body: Record<string, unknown> }) => {
    expect([res.status, res.body['error']]).toEqual([400, 'invalid_grant']);
    expect(res.body['error_description']).toMatch(/the grant has been revoked/);
    expect(res.body['access_token']).toBeUndefined();
  };

  it("a thief refreshing a bearer grant with its own DPoP key gets no pair, and the client's retry never receives a thief-bound one", async () => {
    const tokens = await grant();
    const thief = await DpopKey.generate();

    const stolen = await refresh(tokens.refresh_token, thief);
    expect([stolen.status, stolen.body.error]).toEqual([400, 'invalid_dpop_proof']);
    expect(stolen.body.access_token).toBeUndefined();

    // The client's request (its first answer lost, say) gets a pair of its own: bearer, bound to nobody's key.
    const client = await refresh(tokens.refresh_token);
    expect(client.status).toBe(200);
    expect(client.body.token_type).toBe('Bearer');
    expect(boundTo(client.body.access_token)).toBeUndefined();
    const retry = await refresh(tokens.refresh_token);
    expect(retry.body).toMatchObject({ access_token: client.body.access_token, refresh_token: client.body.refresh_token });

    // The thief again, now that the token is spent and its pair still unused: reuse, the grant ends.
    revoked(await refresh(tokens.refresh_token, thief));
    expect(await accounts(client.body.access_token)).toBe(401);
    expect((await refresh(client.body.refresh_token)).body.error).toBe('invalid_grant');
    expect((await refresh(tokens.refresh_token)).body.error).toBe('invalid_grant');
  });

  it('the client refreshes a bearer grant, a thief replays the spent token with its own key within the window: reuse, the grant is revoked', async () => {
    const tokens = await grant();
    const next = await refresh(tokens.refresh_token);
    expect(next.status).toBe(200);

    revoked(await refresh(tokens.refresh_token, await DpopKey.generate()));
    // Nothing from the grant works any more: the client's new pair, and the retry it might still send.
    expect(await accounts(next.body.access_token)).toBe(401);
    expect((await refresh(next.body.refresh_token)).body.error).toBe('invalid_grant');
    expect((await refresh(tokens.refresh_token)).body.error).toBe('invalid_grant');
  });

  it.each([
    ['proves another key', 'thief'],
    ['carries no proof', 'none'],
  ] as const)(
    'the client refreshes a DPoP-bound grant, a replay of the spent token that %s within the window is reuse: the grant is revoked',
    async (_, replayWith) => {
      const key = await DpopKey.generate();
      const tokens = await grant(key);
      const next = await refresh(tokens.refresh_token, key);
      expect(next.status).toBe(200);
      expect(boundTo(next.body.access_token)).toBe(key.jkt);

      revoked(await refresh(tokens.refresh_token, replayWith === 'thief' ? await DpopKey.generate() : undefined));
      expect(await accounts(next.body.access_token, key)).toBe(401);
      expect((await refresh(next.body.refresh_token, key)).body.error).toBe('invalid_grant');
      expect((await refresh(tokens.refresh_token, key)).body.error).toBe('invalid_grant');
    },
  );

  it('a retry with the same key within the window gets the same pair, concurrent ones too: a lost answer logs nobody out', async () => {
    const key = await DpopKey.generate();
    const tokens = await grant(key);

    const concurrent = await Promise.all([1, 2, 3].map(() => refresh(tokens.refresh_token, key)));
    expect(concurrent.map((r) => r.status)).toEqual([200, 200, 200]);
    const [first] = concurrent;
    for (const r of concurrent)
      expect(r.body).toMatchObject({
        access_token: first!.body.access_token,
        refresh_token: first!.body.refresh_token,
        token_type: 'DPoP',
      });
    expect(boundTo(first!.body.access_token)).toBe(key.jkt);
    const late = await refresh(tokens.refresh_token, key);
    expect(late.body).toMatchObject({ access_token: first!.body.access_token, refresh_token: first!.body.refresh_token });

    // The grant lives on: the pair works, and its refresh token refreshes.
    expect(await accounts(first!.body.access_token, key)).toBe(200);
    const after = await refresh(first!.body.refresh_token, key);
    expect(after.status).toBe(200);
    expect(await accounts(after.body.access_token, key)).toBe(200);
  });

  it('the client rotates its DPoP key at a refresh (the refresh token is bound to no key): the retry within the window must prove the new key, the old key is reuse', async () => {
    const oldKey = await DpopKey.generate();
    const newKey = await DpopKey.generate();
    const tokens = await grant(oldKey);

    const rotated = await refresh(tokens.refresh_token, newKey);
    expect(rotated.status).toBe(200);
    expect(boundTo(rotated.body.access_token)).toBe(newKey.jkt);
    const retry = await refresh(tokens.refresh_token, newKey);
    expect(retry.body).toMatchObject({ access_token: rotated.body.access_token, refresh_token: rotated.body.refresh_token });

    // The kept pair is bound to the new key: the old key presenting the spent token is someone else.
    revoked(await refresh(tokens.refresh_token, oldKey));
    expect(await accounts(rotated.body.access_token, newKey)).toBe(401);
    expect((await refresh(rotated.body.refresh_token, newKey)).body.error).toBe('invalid_grant');
  });

  it('a bearer grant refreshed with a DPoP proof is not bound mid-life: refused, nothing spent, its tokens stay bearer', async () => {
    const tokens = await grant();
    const key = await DpopKey.generate();

    const withProof = await refresh(tokens.refresh_token, key);
    expect([withProof.status, withProof.body.error]).toEqual([400, 'invalid_dpop_proof']);
    expect(withProof.body.error_description).toMatch(/authorized without DPoP/);

    // Nothing was spent or ended: without a proof the same token refreshes, to bearer tokens.
    const plain = await refresh(tokens.refresh_token);
    expect(plain.status).toBe(200);
    expect(plain.body.token_type).toBe('Bearer');
    expect(boundTo(plain.body.access_token)).toBeUndefined();
    expect(await accounts(plain.body.access_token)).toBe(200);
    // Its successor is just as unbound.
    expect((await refresh(plain.body.refresh_token, key)).body.error).toBe('invalid_dpop_proof');
    expect((await refresh(plain.body.refresh_token)).status).toBe(200);
  });
});
