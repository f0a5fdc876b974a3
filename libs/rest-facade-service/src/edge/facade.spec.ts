import { randomUUID } from 'node:crypto';
import express from 'express';
import { exportJWK, generateKeyPair, SignJWT, type KeyLike } from 'jose';
import { CLIENT_ADDRESS_HEADER, INTERNAL_CLAIMS_HEADER, InternalClaimsVerifier, SessionStore } from '@trading/auth';
import { createLogger } from '@trading/logging';
import { MemoryStore } from '@trading/redis';
import { listen, type RunningServer, type ServiceApp } from '@trading/service';
import { http, testKeys } from '@trading/testing';
import { createRestFacadeApp, loadFacadeConfig } from '../app';

/**
 * The facade against a stand-in gateway and JWKS, both real HTTP servers: GraphQL error codes
 * become HTTP statuses in one place, and the signed claims reach the gateway.
 */
describe('REST facade', () => {
  const serviceKeys = testKeys();
  const store = new MemoryStore();
  let privateKey: KeyLike;
  let upstream: RunningServer;
  let facade: ServiceApp;
  let server: RunningServer;
  let nextAnswer: { status?: number; body: unknown } = { body: {} };
  let seenClaims: string | undefined;
  const tokenRequests: Array<{ headers: Record<string, unknown>; body: string }> = [];

  beforeAll(async () => {
    const keys = await generateKeyPair('ES256');
    privateKey = keys.privateKey;
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256' };
    const stand = express();
    stand.get('/jwks', (_req, res) => res.json({ keys: [jwk] }));
    stand.post('/graphql', express.json(), (req, res) => {
      seenClaims = req.get(INTERNAL_CLAIMS_HEADER);
      res.status(nextAnswer.status ?? 200).json(nextAnswer.body);
    });
    stand.post('/oauth/token', express.text({ type: () => true }), (req, res) => {
      tokenRequests.push({ headers: req.headers, body: req.body as string });
      res.status(400).json({ error: 'invalid_grant' });
    });
    upstream = await listen(stand, 0, '127.0.0.1');
    facade = await createRestFacadeApp(
      loadFacadeConfig({
        ...serviceKeys.env('rest-facade'),
        GATEWAY_URL: `${upstream.url}/graphql`,
        AUTH_INTERNAL_URL: upstream.url,
        AUTH_JWKS_URL: `${upstream.url}/jwks`,
        AUTH_ISSUER: 'http://issuer',
      }),
      { logger: createLogger('rest-facade', 'silent'), store },
    );
    server = await listen(facade.app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await server.close();
    await facade.close();
    await upstream.close();
  });

  async function session(scope = ['read:accounts']) {
    const sid = randomUUID();
    await new SessionStore(store).create({ sid, userId: 'u1', kind: 'pat', patId: 'p', expiresAt: Math.floor(Date.now() / 1000) + 60 });
    return new SignJWT({ sid, kind: 'pat', pat_id: 'p', access: 'READ_ONLY', scope: scope.join(' ') })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
      .setSubject('u1')
      .setIssuer('http://issuer')
      .setAudience('trading-api')
      .setExpirationTime('1m')
      .sign(privateKey);
  }

  it('translates GET /v1/accounts into one gateway operation carrying signed claims', async () => {
    nextAnswer = { body: { data: { accounts: [{ id: 'a1' }] } } };
    const res = await http('GET', `${server.url}/v1/accounts`, { token: await session() });
    expect(res).toMatchObject({ status: 200, body: { accounts: [{ id: 'a1' }] } });
    expect(await new InternalClaimsVerifier('gateway', serviceKeys.trusted).verify(seenClaims)).toMatchObject({
      sub: 'u1',
      scope: ['read:accounts'],
      access: 'READ_ONLY',
    });
  });

  it.each([
    ['NOT_FOUND', 404],
    ['BAD_USER_INPUT', 400],
    ['UNPROCESSABLE', 422],
    ['INSUFFICIENT_SCOPE', 403],
    ['CONFLICT', 409],
  ])('maps GraphQL %s to HTTP %i as problem+json with the field', async (code, status) => {
    nextAnswer = { body: { data: null, errors: [{ message: `said ${code}`, extensions: { code, field: 'accountId' } }] } };
    const res = await http('GET', `${server.url}/v1/accounts`, { token: await session() });
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body).toMatchObject({ status, code, detail: `said ${code}`, field: 'accountId' });
  });

  it('masks internal errors and reports an unreachable gateway as 502', async () => {
    nextAnswer = {
      body: { errors: [{ message: 'connect ECONNREFUSED http://accounts:4001', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] },
    };
    const masked = await http('GET', `${server.url}/v1/accounts`, { token: await session() });
    expect(masked.status).toBe(500);
    expect(JSON.stringify(masked.body)).not.toContain('4001');
    nextAnswer = { status: 200, body: 'not json' as unknown };
    const broken = await http('GET', `${server.url}/v1/accounts`, { token: await session() });
    expect(broken.status).toBe(502);
  });

  it("passes /v1/oauth/token to auth with the address it signed, never the caller's claims or forwarding headers", async () => {
    tokenRequests.length = 0;
    const res = await fetch(`${server.url}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', [INTERNAL_CLAIMS_HEADER]: 'forged', 'x-forwarded-for': '6.6.6.6' },
      body: 'grant_type=refresh_token&refresh_token=r1',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_grant' }); // auth's answer, as auth gave it
    expect(tokenRequests).toHaveLength(1);
    expect(tokenRequests[0]!.body).toBe('grant_type=refresh_token&refresh_token=r1');
    expect(tokenRequests[0]!.headers[INTERNAL_CLAIMS_HEADER]).toBeUndefined();
    expect(tokenRequests[0]!.headers['x-forwarded-for']).toBeUndefined();
    expect(tokenRequests[0]!.headers[CLIENT_ADDRESS_HEADER]).toEqual(expect.any(String));

    // A body no token request needs: refused here, naming the body, and auth never sees it.
    const huge = await fetch(`${server.url}/v1/oauth/token`, { method: 'POST', body: 'x'.repeat(65 * 1024) });
    expect(huge.status).toBe(400);
    expect(await huge.json()).toMatchObject({ code: 'BAD_USER_INPUT', field: 'body' });
    expect(tokenRequests).toHaveLength(1);
  });

  it('checks route scopes before calling the gateway', async () => {
    seenClaims = undefined;
    const res = await http('GET', `${server.url}/v1/accounts`, { token: await session(['read:orders']) });
    expect(res.status).toBe(403);
    expect(seenClaims).toBeUndefined();
  });

  it('answers an unknown path 404 and a wrong method 405 with Allow, before asking for a token', async () => {
    expect(await http('GET', `${server.url}/v1/no-such-thing`)).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    const wrong = await http('DELETE', `${server.url}/v1/accounts`);
    expect(wrong).toMatchObject({ status: 405, body: { code: 'METHOD_NOT_ALLOWED' } });
    expect(wrong.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect((await http('GET', `${server.url}/v1/pat/revoke`)).headers.get('allow')).toBe('OPTIONS, POST');
    expect((await http('GET', `${server.url}/v1/accounts`)).status).toBe(401);
  });
});
