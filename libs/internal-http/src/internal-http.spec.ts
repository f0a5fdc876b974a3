import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { INTERNAL_BACK_OFFICE_SCOPE, INTERNAL_CLAIMS_HEADER, InternalClaimsVerifier } from '@trading/auth';
import { AppError } from '@trading/errors';
import { testKeys } from '@trading/testing';
import type { GraphQLEndpoint } from '@trading/service';
import { InternalClient } from './index';

/** A peer's internal listener: answers by path, and tells what claims it was sent. */
function peer(verifier: InternalClaimsVerifier): Promise<{ url: string; server: Server }> {
  const server = createServer(async (req, res) => {
    const send = (status: number, body: unknown, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url!, 'http://peer');
    if (url.pathname === '/ok') {
      const claims = await verifier.verify(req.headers[INTERNAL_CLAIMS_HEADER] as string | undefined);
      return send(200, {
        caller: claims?.caller ?? null,
        sub: claims?.sub ?? null,
        query: Object.fromEntries(url.searchParams),
        requestId: req.headers['x-request-id'] ?? null,
      });
    }
    if (url.pathname === '/conflict') {
      return send(
        409,
        {
          type: 't',
          title: 'Conflict',
          status: 409,
          detail: 'Account TA1 cannot be closed',
          code: 'CONFLICT',
          field: 'accountId',
          reasons: ['cash remains'],
        },
        'application/problem+json',
      );
    }
    if (url.pathname === '/broken')
      return send(500, { type: 't', title: 'x', status: 500, detail: 'stack trace here', code: 'INTERNAL_SERVER_ERROR' });
    // A load balancer with no instance ready answers its own page.
    if (url.pathname === '/no-instance') {
      res.writeHead(503, { 'content-type': 'text/html' });
      return void res.end('<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n');
    }
    if (url.pathname === '/slow') return void setTimeout(() => send(200, {}), 1500);
    send(404, { code: 'NOT_FOUND', detail: 'No such path' });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })),
  );
}

describe('InternalClient', () => {
  const keys = testKeys();
  const claims = { sub: 'back-office', sid: 'back-office', kind: 'pat' as const, scope: [INTERNAL_BACK_OFFICE_SCOPE] };
  let target: { url: string; server: Server };
  let client: InternalClient;

  beforeAll(async () => {
    target = await peer(new InternalClaimsVerifier('accounts', keys.trusted));
    client = new InternalClient(target.url, 'accounts', keys.signer('auth'), { timeoutMs: 500 });
  });
  afterAll(async () => {
    await client.close();
    await new Promise((r) => target.server.close(r));
  });

  it('signs the call as this service for the peer, with the request id and the query', async () => {
    const answer = await client.get<Record<string, unknown>>('/ok', {
      claims,
      query: { userId: 'u1', skipped: undefined },
      requestId: 'req-1',
    });
    expect(answer).toEqual({ caller: 'auth', sub: 'back-office', query: { userId: 'u1' }, requestId: 'req-1' });
  });

  it("turns the peer's refusal into the same AppError, with its field and details", async () => {
    const err = await client.post('/conflict', { claims, body: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'CONFLICT',
      message: 'Account TA1 cannot be closed',
      field: 'accountId',
      options: { details: { reasons: ['cash remains'] } },
    });
    expect(await client.get('/nowhere', { claims }).catch((e: unknown) => e)).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('never passes a peer failure on as it is: 5xx, no answer in time and no peer are SERVICE_UNAVAILABLE naming the peer', async () => {
    for (const path of ['/broken', '/slow']) {
      const err = (await client.get(path, { claims }).catch((e: unknown) => e)) as AppError;
      expect({ path, code: err.code, message: err.message }).toEqual({
        path,
        code: 'SERVICE_UNAVAILABLE',
        message: expect.stringContaining('accounts'),
      });
      expect(err.message).not.toContain('stack trace');
    }
    const nobody = new InternalClient('http://127.0.0.1:9', 'oms', keys.signer('auth'));
    expect(await nobody.get('/ok', { claims }).catch((e: unknown) => e)).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'The oms service could not be reached; try again',
    });
    await nobody.close();
  });

  it("relays a peer's (or its load balancer's) 503 as SERVICE_UNAVAILABLE, even where other failures are BAD_GATEWAY", async () => {
    const facadeLike = new InternalClient(target.url, 'gateway', keys.signer('rest-facade'), { unavailableCode: 'BAD_GATEWAY' });
    expect(await facadeLike.post('/no-instance', { claims, body: {} }).catch((e: unknown) => e)).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'The gateway service is briefly unavailable; try again',
    });
    expect(await facadeLike.get('/broken', { claims }).catch((e: unknown) => e)).toMatchObject({ code: 'BAD_GATEWAY' });
    await facadeLike.close();
  });

  it('calls a peer of the same process with the same signed claims, and fails it as unreachable when it is gone or stuck', async () => {
    const verifier = new InternalClaimsVerifier('accounts', keys.trusted);
    let seen: unknown;
    const answering: GraphQLEndpoint = async (call) => {
      seen = await verifier.verify(call.headers[INTERNAL_CLAIMS_HEADER] as string);
      return { status: 200, headers: new Map(), body: JSON.stringify({ data: { ok: true } }) };
    };
    let peerNow: GraphQLEndpoint | undefined = answering;
    const local = new InternalClient('http://127.0.0.1:1', 'accounts', keys.signer('auth'), {
      timeoutMs: 200,
      inProcessGraphql: () => peerNow,
    });
    await expect(local.graphql('/graphql', '{ ok }', {}, { claims })).resolves.toEqual({ ok: true });
    expect(seen).toMatchObject({ caller: 'auth', sub: 'back-office' });

    peerNow = () => new Promise(() => undefined); // stuck: never answers
    await expect(local.graphql('/graphql', '{ ok }', {}, { claims })).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    peerNow = undefined; // stopped
    await expect(local.graphql('/graphql', '{ ok }', {}, { claims })).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await local.close();
  });
});
