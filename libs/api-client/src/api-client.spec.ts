import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTradingApiClient } from './index';

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
});
