import { AppError } from '@trading/errors';
import { createLogger } from '@trading/logging';
import { createService, finishService, listen } from './index';

// Not @trading/testing: it is built on this lib, and a spec importing it would make a cycle.
async function http(method: string, url: string, options: { headers?: Record<string, string> } = {}) {
  const res = await fetch(url, { method, headers: options.headers });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON (metrics) */
  }
  return { status: res.status, headers: res.headers, body };
}

describe('createService', () => {
  it('serves health, readiness by dependency, metrics, request ids and problem+json errors', async () => {
    let databaseUp = true;
    const logger = createLogger('svc', 'silent');
    const { app, internal } = createService({
      name: 'svc',
      logger,
      readiness: {
        database: async () => {
          if (!databaseUp) throw new Error('down');
        },
      },
    });
    app.get('/boom', () => {
      throw new Error('secret internals at 10.0.0.1');
    });
    app.get('/bad', () => {
      throw new AppError('BAD_USER_INPUT', 'limit must be 1..100', { field: 'limit' });
    });
    app.get('/echo-headers', (req, res) => {
      res.json(req.headers);
    });
    finishService(app, logger);
    finishService(internal, logger);
    const server = await listen(app, 0, '127.0.0.1');
    const inside = await listen(internal, 0, '127.0.0.1');
    try {
      expect((await http('GET', `${server.url}/healthz`)).status).toBe(200);
      expect((await http('GET', `${inside.url}/readyz`)).body).toMatchObject({ status: 'ready', checks: { database: 'ok' } });
      // The public readiness answer names no dependency.
      expect((await http('GET', `${server.url}/readyz`)).body).toEqual({ status: 'ready' });
      databaseUp = false;
      expect(await http('GET', `${inside.url}/readyz`)).toMatchObject({ status: 503, body: { checks: { database: 'unavailable' } } });
      expect(await http('GET', `${server.url}/readyz`)).toEqual(expect.objectContaining({ status: 503, body: { status: 'not ready' } }));
      // A caller cannot smuggle internal headers past a public listener.
      const echoed = await http('GET', `${server.url}/echo-headers`, {
        headers: { 'x-internal-claims': 'captured', 'x-internal-client-address': 'forged', 'x-other': 'kept' },
      });
      expect(echoed.body).not.toHaveProperty('x-internal-claims');
      expect(echoed.body).not.toHaveProperty('x-internal-client-address');
      expect(echoed.body['x-other']).toBe('kept');
      expect((await http('GET', `${server.url}/metrics`)).status).toBe(404);

      const boom = await http('GET', `${server.url}/boom`, { headers: { 'x-request-id': 'abc-1' } });
      expect(boom).toMatchObject({ status: 500, body: { code: 'INTERNAL_SERVER_ERROR', requestId: 'abc-1' } });
      expect(boom.headers.get('x-request-id')).toBe('abc-1');
      expect(JSON.stringify(boom.body)).not.toContain('10.0.0.1');
      expect(await http('GET', `${server.url}/bad`)).toMatchObject({ status: 400, body: { field: 'limit' } });
      expect(await http('GET', `${server.url}/missing`)).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });

      const metrics = await http('GET', `${inside.url}/metrics`);
      expect(metrics.body).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/boom"[^}]*status="500"/);
    } finally {
      await server.close();
      await inside.close();
    }
  });
});
