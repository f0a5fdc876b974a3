import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTradingApiClient, createTradingClient, idempotencyHeader, newIdempotencyKey } from './index';

describe('createTradingApiClient', () => {
  let server: Server;
  let base: string;
  const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url!, headers: req.headers });
      if (req.url === '/v1/accounts') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ accounts: [] }));
      }
      res.writeHead(404, { 'content-type': 'application/problem+json' });
      res.end(
        JSON.stringify({ type: 't', title: 'Not found', status: 404, detail: 'Account not found', code: 'NOT_FOUND', field: 'accountId' }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('sends the token it is given at each call, and answers data or the problem', async () => {
    let token = 'first';
    const api = createTradingApiClient({ baseUrl: base, token: () => token });
    expect((await api.GET('/accounts')).data).toEqual({ accounts: [] });
    token = 'rotated';
    const missing = await api.GET('/accounts/{accountId}/margin', {
      params: { path: { accountId: '7f1e4c2a-0000-4000-8000-000000000000' } },
    });
    expect([missing.response.status, missing.error?.code, missing.error?.field]).toEqual([404, 'NOT_FOUND', 'accountId']);
    expect(seen.map((s) => [s.url, s.headers.authorization])).toEqual([
      ['/v1/accounts', 'Bearer first'],
      ['/v1/accounts/7f1e4c2a-0000-4000-8000-000000000000/margin', 'Bearer rotated'],
    ]);
  });

  it('createTradingClient sends a fixed accessToken, asks getAccessToken before every request, and sends nothing without either', async () => {
    seen.length = 0;
    await createTradingClient({ baseUrl: base, accessToken: 'pat-session' }).GET('/accounts');
    let n = 0;
    const refreshing = createTradingClient({ baseUrl: base, accessToken: 'ignored', getAccessToken: async () => `oauth-${++n}` });
    await refreshing.GET('/accounts');
    await refreshing.GET('/accounts');
    await createTradingClient({ baseUrl: base }).GET('/accounts');
    expect(seen.map((s) => s.headers.authorization)).toEqual(['Bearer pat-session', 'Bearer oauth-1', 'Bearer oauth-2', undefined]);
  });

  it('makes Idempotency-Key headers: a new UUID each time, or the key given', () => {
    const [a, b] = [newIdempotencyKey(), idempotencyHeader()['Idempotency-Key']];
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(b).not.toBe(a);
    expect(idempotencyHeader('order-42')).toEqual({ 'Idempotency-Key': 'order-42' });
  });
});
