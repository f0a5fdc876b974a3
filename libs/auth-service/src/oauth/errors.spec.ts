import express from 'express';
import { listen } from '@trading/service';
import { oauthErrorHandler, oauthErrors } from './errors';

/** The OAuth endpoints' error shape (RFC 6749 §5.2), over HTTP. */
describe('oauthErrorHandler', () => {
  const unexpected: unknown[] = [];
  const failures: Record<string, unknown> = {
    '/refused': oauthErrors.invalidGrant('The refresh token is not valid'),
    // What node-postgres rejects with when a lock wait ends (lock_timeout): nothing was spent.
    '/lock-wait': Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03', query: 'SELECT secret' }),
    '/bug': new TypeError('cannot read properties of undefined (reading "grant")'),
  };
  let url: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const app = express();
    for (const [path, err] of Object.entries(failures)) app.post(path, (_req, _res, next) => next(err));
    app.use(oauthErrorHandler((err) => unexpected.push(err)));
    const server = await listen(app, 0);
    url = server.url;
    close = () => server.close();
  });
  afterAll(() => close?.());

  const post = async (path: string) => {
    const res = await fetch(url + path, { method: 'POST' });
    return {
      status: res.status,
      cacheControl: res.headers.get('cache-control'),
      retryAfter: res.headers.get('retry-after'),
      body: await res.json(),
    };
  };

  it("answers its own errors as thrown, a dependency's 'not now' as temporarily_unavailable (503), and a bug as server_error", async () => {
    expect(await post('/refused')).toMatchObject({ status: 400, cacheControl: 'no-store', body: { error: 'invalid_grant' } });
    const busy = await post('/lock-wait');
    expect(busy).toMatchObject({ status: 503, cacheControl: 'no-store', retryAfter: '1', body: { error: 'temporarily_unavailable' } });
    expect(JSON.stringify(busy.body)).not.toMatch(/lock|SELECT/);
    expect(await post('/bug')).toMatchObject({
      status: 500,
      body: { error: 'server_error', error_description: 'An unexpected error occurred' },
    });
    expect(unexpected).toEqual([failures['/bug']]); // only the bug is logged as one
  });
});
