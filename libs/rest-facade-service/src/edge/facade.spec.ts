import { randomUUID } from 'node:crypto';
import express from 'express';
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT, type KeyLike } from 'jose';
import {
  accessTokenHash,
  CLIENT_ADDRESS_HEADER,
  INTERNAL_CLAIMS_HEADER,
  InternalClaimsVerifier,
  SCOPES,
  SessionStore,
} from '@trading/auth';
import { createLogger } from '@trading/logging';
import { MemoryStore } from '@trading/redis';
import { listen, type RunningServer, type ServiceApp } from '@trading/service';
import { http, testKeys } from '@trading/testing';
import { createRestFacadeApp, loadFacadeConfig } from '../app';
import { publicRequest } from './authenticate';

/** What a request without any credentials is offered: both schemes, DPoP with the algorithms it takes. */
const NO_CREDENTIALS_CHALLENGE = 'Bearer realm="trading-api", DPoP realm="trading-api", algs="ES256 EdDSA PS256"';
const invalidTokenChallenge = (description: string) =>
  `Bearer realm="trading-api", error="invalid_token", error_description="${description}"`;

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
        FACADE_PUBLIC_URL: 'https://api.example/v1,https://api2.example/v1',
      }),
      { logger: createLogger('rest-facade', 'silent'), store },
    );
    server = await listen(facade.app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    // After a start-up that failed, some of these were never made: close what was.
    const started: Array<{ close(): Promise<void> } | undefined> = [server, facade, upstream];
    for (const running of started) await running?.close();
  });

  /** An access token as auth signs it; `expiresAt` as jose takes it ('1m', or seconds since the epoch). */
  function accessToken(claims: Record<string, unknown>, expiresAt: string | number = '1m') {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
      .setSubject('u1')
      .setIssuer('http://issuer')
      .setAudience('trading-api')
      .setExpirationTime(expiresAt)
      .sign(privateKey);
  }

  /** A live PAT session and its token: READ_ONLY unless `claims` say otherwise. */
  async function session(scope = ['read:accounts'], claims: Record<string, unknown> = {}) {
    const sid = randomUUID();
    await new SessionStore(store).create({ sid, userId: 'u1', kind: 'pat', patId: 'p', expiresAt: Math.floor(Date.now() / 1000) + 60 });
    return accessToken({ sid, kind: 'pat', pat_id: 'p', access: 'READ_ONLY', scope: scope.join(' '), ...claims });
  }

  /** Fixed, so the tests' names stay the same from run to run. */
  const accountId = '0be25d03-74f2-4b5a-8394-60f48c73478f';
  const verifyClaims = (header: string | undefined) => new InternalClaimsVerifier('gateway', serviceKeys.trusted).verify(header);

  it('translates GET /v1/accounts into one gateway operation carrying signed claims', async () => {
    nextAnswer = { body: { data: { accounts: [{ id: 'a1' }] } } };
    const token = await session();
    const res = await http('GET', `${server.url}/v1/accounts`, { token });
    expect(res).toMatchObject({ status: 200, body: { accounts: [{ id: 'a1' }] } });
    // The caller as the token and its session say, with the address the edge saw: nothing more, nothing less.
    expect(await verifyClaims(seenClaims)).toEqual({
      sub: 'u1',
      sid: decodeJwt(token)['sid'],
      kind: 'pat',
      patId: 'p',
      scope: ['read:accounts'],
      access: 'READ_ONLY',
      ip: '127.0.0.1',
      caller: 'rest-facade',
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

  describe('the READ_ONLY method rule', () => {
    it('lets a READ_ONLY token GET, HEAD and OPTIONS', async () => {
      const token = await session();
      nextAnswer = { body: { data: { account: { id: accountId } } } };
      expect(await http('GET', `${server.url}/v1/accounts/${accountId}`, { token })).toMatchObject({
        status: 200,
        body: { id: accountId },
      });

      seenClaims = undefined;
      const head = await http('HEAD', `${server.url}/v1/accounts/${accountId}`, { token });
      expect([head.status, head.body]).toEqual([200, undefined]);
      expect(await verifyClaims(seenClaims)).toMatchObject({ access: 'READ_ONLY' }); // HEAD runs the operation, as GET does

      seenClaims = undefined;
      const options = await http('OPTIONS', `${server.url}/v1/accounts/${accountId}`, { token });
      expect([options.status, options.body, options.headers.get('allow')]).toEqual([204, undefined, 'GET, HEAD, OPTIONS, PATCH']);
      expect(seenClaims).toBeUndefined(); // OPTIONS reaches no route
    });

    it.each([
      ['POST', '/v1/oms/order'],
      ['PUT', '/v1/oms/order'],
      ['DELETE', '/v1/oms/order?orderId=o1'],
      ['PATCH', `/v1/accounts/${accountId}`],
      ['POST', '/v1/pat/revoke'],
    ])('refuses a READ_ONLY token %s %s with 403 READ_ONLY_TOKEN, whatever scopes it holds', async (method, path) => {
      seenClaims = undefined;
      const res = await http(method, `${server.url}${path}`, { token: await session([...SCOPES]), body: {} });
      const detail = `A READ_ONLY token may not use ${method}`;
      expect(res).toMatchObject({ status: 403, body: { status: 403, code: 'READ_ONLY_TOKEN', detail } });
      expect(res.headers.get('www-authenticate')).toBe(
        `Bearer realm="trading-api", error="insufficient_scope", error_description="${detail}"`,
      );
      expect(seenClaims).toBeUndefined();
    });

    it('lets a READ_WRITE token write, and the route sees its claims', async () => {
      nextAnswer = { body: { data: { settings: { accountId, nickname: 'n' } } } };
      const token = await session(['write:accounts'], { access: 'READ_WRITE' });
      const res = await http('PATCH', `${server.url}/v1/accounts/${accountId}`, { token, body: { nickname: 'n' } });
      expect(res).toMatchObject({ status: 200, body: { accountId, nickname: 'n' } });
      expect(await verifyClaims(seenClaims)).toMatchObject({
        sid: decodeJwt(token)['sid'],
        scope: ['write:accounts'],
        access: 'READ_WRITE',
      });
    });
  });

  it.each([
    ['GET', '/v1/accounts', 'read:accounts'],
    ['GET', `/v1/banking/${accountId}/balance`, 'read:banking'],
    ['GET', `/v1/oms/${accountId}/orders`, 'read:orders'],
    ['GET', '/v1/market/clock', 'read:market'],
    ['POST', '/v1/oms/order', 'write:orders'],
    ['GET', '/v1/pat/login-activity', 'read:accounts'],
    ['POST', '/v1/pat/revoke', 'write:accounts'],
  ])(
    'refuses %s %s 403 INSUFFICIENT_SCOPE naming %s to a token with every other scope, before the gateway',
    async (method, path, scope) => {
      seenClaims = undefined;
      const token = await session(
        SCOPES.filter((s) => s !== scope),
        { access: 'READ_WRITE' },
      );
      const res = await http(method, `${server.url}${path}`, { token, body: method === 'POST' ? {} : undefined });
      expect(res).toMatchObject({
        status: 403,
        body: { status: 403, code: 'INSUFFICIENT_SCOPE', detail: `This operation needs scope ${scope}` },
      });
      expect(res.headers.get('www-authenticate')).toBe(`Bearer realm="trading-api", error="insufficient_scope", scope="${scope}"`);
      expect(seenClaims).toBeUndefined();
    },
  );

  describe('credentials', () => {
    it.each([
      ['no Authorization header', undefined],
      ['another scheme', 'Basic dTpw'],
    ])('refuses a request with %s 401, offering Bearer and DPoP', async (_what, authorization) => {
      const res = await http('GET', `${server.url}/v1/accounts`, { headers: authorization ? { authorization } : {} });
      expect(res).toMatchObject({
        status: 401,
        body: { status: 401, code: 'UNAUTHENTICATED', detail: 'A bearer or DPoP access token is required' },
      });
      expect(res.headers.get('www-authenticate')).toBe(NO_CREDENTIALS_CHALLENGE);
    });

    it('refuses a token that is not valid 401 invalid_token, saying why', async () => {
      const expired = await accessToken(
        { sid: randomUUID(), kind: 'pat', pat_id: 'p', access: 'READ_ONLY', scope: 'read:accounts' },
        Math.floor(Date.now() / 1000) - 120,
      );
      const unknownSession = await accessToken({
        sid: randomUUID(),
        kind: 'pat',
        pat_id: 'p',
        access: 'READ_ONLY',
        scope: 'read:accounts',
      });
      for (const [token, detail] of [
        ['not-a-jwt', 'The access token is invalid'],
        [expired, 'The access token has expired'],
        [unknownSession, 'The session has ended (revoked or expired)'],
      ] as const) {
        const res = await http('GET', `${server.url}/v1/accounts`, { token });
        expect(res).toMatchObject({ status: 401, body: { code: 'UNAUTHENTICATED', detail } });
        expect(res.headers.get('www-authenticate')).toBe(invalidTokenChallenge(detail));
      }
    });

    it('takes a DPoP-bound token with a proof of this request at any configured public URL, and refuses a proof of another URL', async () => {
      const key = await generateKeyPair('ES256', { extractable: true });
      const jwk = await exportJWK(key.publicKey);
      const token = await session(['read:accounts'], { cnf: { jkt: await calculateJwkThumbprint(jwk) } });
      const proof = (htu: string) =>
        new SignJWT({ htm: 'GET', htu, jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ath: accessTokenHash(token) })
          .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
          .sign(key.privateKey);
      const call = async (htu: string) =>
        http('GET', `${server.url}/v1/accounts`, { headers: { authorization: `DPoP ${token}`, dpop: await proof(htu) } });
      nextAnswer = { body: { data: { accounts: [] } } };

      expect(await call('https://api.example/v1/accounts')).toMatchObject({ status: 200, body: { accounts: [] } });
      expect(await call('https://api2.example/v1/accounts')).toMatchObject({ status: 200 });

      const elsewhere = await call('https://api.example/v1/accounts/other');
      const description =
        "The DPoP proof's htu must be the URL of this request (https://api.example/v1/accounts), without query or fragment";
      expect(elsewhere).toMatchObject({ status: 401, body: { code: 'UNAUTHENTICATED', error: 'invalid_dpop_proof', detail: description } });
      expect(elsewhere.headers.get('www-authenticate')).toBe(
        `DPoP realm="trading-api", algs="ES256 EdDSA PS256", error="invalid_dpop_proof", error_description="${description}"`,
      );
    });
  });

  describe('the route guard, before any token is asked for', () => {
    it('answers a path the API does not have 404, naming it', async () => {
      for (const path of ['/no-such-thing', `/accounts/${accountId}/extra`, '/accounts/a/b/c']) {
        expect(await http('GET', `${server.url}/v1${path}`)).toMatchObject({
          status: 404,
          body: { status: 404, code: 'NOT_FOUND', detail: `No API path ${path}` },
        });
      }
    });

    it('answers a method the path does not take 405 with Allow, naming what it takes', async () => {
      for (const [method, path, allow] of [
        ['DELETE', '/accounts', 'GET, HEAD, OPTIONS'],
        ['DELETE', `/accounts/${accountId}`, 'GET, HEAD, OPTIONS, PATCH'],
        ['GET', '/pat/revoke', 'OPTIONS, POST'],
        ['GET', '/oms/order', 'DELETE, OPTIONS, POST, PUT'],
      ] as const) {
        const res = await http(method, `${server.url}/v1${path}`);
        expect(res).toMatchObject({
          status: 405,
          body: { status: 405, code: 'METHOD_NOT_ALLOWED', detail: `${method} is not allowed on ${path}; use ${allow}` },
        });
        expect(res.headers.get('allow')).toBe(allow);
      }
    });

    it('takes any value for a path parameter (one segment) and a trailing slash, then asks for the token', async () => {
      for (const path of ['/accounts', '/accounts/', '/accounts/a1', `/oms/${accountId}/order/o-1`, '/market/bars/BRK.B']) {
        expect({ path, status: (await http('GET', `${server.url}/v1${path}`)).status }).toEqual({ path, status: 401 });
      }
    });
  });

  describe('the query guard', () => {
    it.each([
      ['GET', '/market/calendar?bogus=1', 'bogus', 'GET /market/calendar takes start, end'],
      ['GET', '/market/bars/AAPL?symbols=X', 'symbols', 'GET /market/bars/{symbol} takes timeframe, start, end, limit, pageToken, cursor'],
      ['GET', `/oms/${accountId}/order/o1?x=1`, 'x', 'GET /oms/{accountId}/order/{orderId} takes none'],
      ['POST', '/oms/order?orderId=o1', 'orderId', 'POST /oms/order takes none'],
      ['GET', '/pat/login-activity?all=1', 'all', 'GET /pat/login-activity takes limit, cursor, from, to'],
    ])('refuses %s %s 400 naming the parameter and what the operation takes, before the token', async (method, path, name, takes) => {
      const res = await http(method, `${server.url}/v1${path}`, { body: method === 'POST' ? {} : undefined });
      expect(res).toMatchObject({
        status: 400,
        body: { status: 400, code: 'BAD_USER_INPUT', field: name, detail: `Unknown query parameter "${name}": ${takes}` },
      });
    });

    it('names at most 40 characters of an unknown parameter in the message, the whole of it in the field', async () => {
      const name = `${'a'.repeat(40)}${'b'.repeat(10)}`;
      const res = await http('GET', `${server.url}/v1/accounts?${name}=1`);
      expect(res).toMatchObject({
        status: 400,
        body: { field: name, detail: `Unknown query parameter "${'a'.repeat(40)}": GET /accounts takes none` },
      });
    });

    it('checks HEAD as GET', async () => {
      expect((await http('HEAD', `${server.url}/v1/market/quotes?bogus=1`)).status).toBe(400);
      expect((await http('HEAD', `${server.url}/v1/market/quotes?symbols=AAPL`)).status).toBe(401);
    });

    it("lets an operation's own parameters through, and leaves a path or method the API lacks to the route guard", async () => {
      expect((await http('GET', `${server.url}/v1/market/calendar?start=2024-01-01&end=2024-01-31`)).status).toBe(401);
      expect((await http('DELETE', `${server.url}/v1/oms/order?orderId=o1`)).status).toBe(401);
      expect((await http('DELETE', `${server.url}/v1/accounts?bogus=1`)).status).toBe(405);
      expect((await http('GET', `${server.url}/v1/no-such-thing?bogus=1`)).status).toBe(404);
    });
  });

  describe('OPTIONS', () => {
    it("answers 204 with Allow for any authenticated caller on a path the API has, auth's included", async () => {
      const token = await session();
      for (const [path, allow] of [
        ['/accounts', 'GET, HEAD, OPTIONS'],
        ['/oms/order', 'DELETE, OPTIONS, POST, PUT'],
        ['/pat/revoke', 'OPTIONS, POST'],
      ] as const) {
        const res = await http('OPTIONS', `${server.url}/v1${path}`, { token });
        expect({ path, status: res.status, allow: res.headers.get('allow'), body: res.body }).toEqual({
          path,
          status: 204,
          allow,
          body: undefined,
        });
      }
    });

    it('asks for a token (401), and answers a path the API does not have 404', async () => {
      const noToken = await http('OPTIONS', `${server.url}/v1/accounts`);
      expect(noToken).toMatchObject({ status: 401, body: { code: 'UNAUTHENTICATED' } });
      expect(noToken.headers.get('www-authenticate')).toBe(NO_CREDENTIALS_CHALLENGE);
      expect(noToken.headers.get('allow')).toBeNull();
      expect(await http('OPTIONS', `${server.url}/v1/no-such-thing`, { token: await session() })).toMatchObject({
        status: 404,
        body: { code: 'NOT_FOUND', detail: 'No API path /no-such-thing' },
      });
    });
  });
});

describe('the public request a DPoP proof is checked against', () => {
  let server: RunningServer;
  beforeAll(async () => {
    const app = express();
    app.use('/v1', (req, res) => {
      res.json(publicRequest(['https://api.example/v1//', 'http://127.0.0.1:8080/v1/'])(req));
    });
    server = await listen(app, 0, '127.0.0.1');
  });
  afterAll(() => server.close());

  it('is the method, the DPoP header and each public base (trailing slashes dropped) with the path under the mount, no query', async () => {
    const res = await fetch(`${server.url}/v1/accounts/a1?x=1`, { method: 'POST', headers: { dpop: 'the-proof' } });
    expect(await res.json()).toEqual({
      proof: 'the-proof',
      method: 'POST',
      urls: ['https://api.example/v1/accounts/a1', 'http://127.0.0.1:8080/v1/accounts/a1'],
    });
  });
});
