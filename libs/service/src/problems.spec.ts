import { Writable } from 'node:stream';
import express from 'express';
import { AppError, errors } from '@trading/errors';
import { createLogger } from '@trading/logging';
import { createService, finishService, listen, sendProblem, type RunningServer } from './index';
import { http } from './testing/http';

describe('problem+json errors', () => {
  const logged: Array<{ msg: string; requestId?: string; err?: { message: string } }> = [];
  let server: RunningServer;

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) logged.push(JSON.parse(line));
        done();
      },
    });
    const logger = createLogger('svc', 'warn', sink);
    const { app } = createService({ name: 'svc', logger });
    app.get('/boom', () => {
      throw new Error('secret internals at 10.0.0.1');
    });
    app.get('/busy', () => {
      // What node-postgres rejects with when a lock wait ends (lock_timeout).
      throw Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03', query: 'SELECT secret FROM t' });
    });
    app.get('/bad', () => {
      throw new AppError('BAD_USER_INPUT', 'limit must be 1..100', { field: 'limit' });
    });
    app.get('/no-token', () => {
      throw new AppError('UNAUTHENTICATED', 'no token', { noCredentials: true });
    });
    app.get('/scope', (req, res) => sendProblem(res, errors.insufficientScope(['write:orders']), req.requestId));
    app.post('/json', express.json({ limit: '64b' }), (req, res) => void res.json(req.body));
    finishService(app, logger);
    server = await listen(app, 0, '127.0.0.1');
  });
  afterAll(() => server.close());
  beforeEach(() => {
    logged.length = 0;
  });

  it('masks an unexpected error as a 500 carrying the request id, and logs it for operators', async () => {
    const boom = await http('GET', `${server.url}/boom`, { headers: { 'x-request-id': 'abc-1' } });
    expect(boom).toMatchObject({ status: 500, body: { code: 'INTERNAL_SERVER_ERROR', requestId: 'abc-1' } });
    expect(boom.headers.get('x-request-id')).toBe('abc-1');
    expect(boom.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(JSON.stringify(boom.body)).not.toContain('10.0.0.1');
    // What the caller is not told, the log keeps, under the id the caller can quote.
    expect(logged.filter((l) => l.msg === 'unhandled error')).toEqual([
      expect.objectContaining({ requestId: 'abc-1', err: expect.objectContaining({ message: 'secret internals at 10.0.0.1' }) }),
    ]);
  });

  it("answers a dependency's 'not now' with 503 and Retry-After, without its words, and logs it as a warning, not a bug", async () => {
    const busy = await http('GET', `${server.url}/busy`);
    expect(busy).toMatchObject({
      status: 503,
      body: { code: 'SERVICE_UNAVAILABLE', detail: expect.stringMatching(/nothing was changed/) },
    });
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(JSON.stringify(busy.body)).not.toMatch(/lock|SELECT/);
    expect(logged.map((l) => l.msg)).toContain('a dependency was briefly unavailable; answered 503');
    expect(logged.filter((l) => l.msg === 'unhandled error')).toEqual([]);
  });

  it('passes an AppError on with its status, message and field, and does not log it as unhandled', async () => {
    const bad = await http('GET', `${server.url}/bad`);
    expect(bad).toMatchObject({ status: 400, body: { field: 'limit' } });
    expect(bad.body).toMatchObject({ code: 'BAD_USER_INPUT', detail: 'limit must be 1..100', requestId: bad.headers.get('x-request-id') });
    expect(bad.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(logged.filter((l) => l.msg === 'unhandled error')).toEqual([]);
  });

  it('answers an unknown path with a 404 NOT_FOUND problem', async () => {
    const missing = await http('GET', `${server.url}/missing`);
    expect(missing).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    expect(missing.body.detail).toBe('No route for GET /missing');
    expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('turns a body that is not JSON, or too large, into a 400 naming the body', async () => {
    const headers = { 'content-type': 'application/json' };
    expect(await http('POST', `${server.url}/json`, { headers, body: '{"a":' })).toMatchObject({
      status: 400,
      body: { code: 'BAD_USER_INPUT', field: 'body', detail: 'The request body is not valid JSON' },
    });
    expect(await http('POST', `${server.url}/json`, { headers, body: JSON.stringify({ a: 'x'.repeat(100) }) })).toMatchObject({
      status: 400,
      body: { code: 'BAD_USER_INPUT', field: 'body', detail: 'The request body is too large' },
    });
  });

  it('sends a bearer challenge with 401 and a missing-scope 403', async () => {
    const noToken = await http('GET', `${server.url}/no-token`);
    expect([noToken.status, noToken.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="trading-api"']);
    const scope = await http('GET', `${server.url}/scope`);
    expect(scope).toMatchObject({ status: 403, body: { code: 'INSUFFICIENT_SCOPE', requestId: scope.headers.get('x-request-id') } });
    expect(scope.headers.get('www-authenticate')).toContain('scope="write:orders"');
    expect(scope.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});
