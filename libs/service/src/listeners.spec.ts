import { createLogger } from '@trading/logging';
import { createService, finishService, listen, type RunningServer } from './index';
import { http } from './testing/http';

describe('createService', () => {
  let databaseUp = true;
  let server: RunningServer;
  let inside: RunningServer;

  beforeAll(async () => {
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
    app.get('/orders/:id', (req, res) => void res.json({ id: req.params['id'] }));
    for (const listener of [app, internal]) listener.get('/echo-headers', (req, res) => void res.json(req.headers));
    finishService(app, logger);
    finishService(internal, logger);
    server = await listen(app, 0, '127.0.0.1');
    inside = await listen(internal, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await server.close();
    await inside.close();
  });
  beforeEach(() => {
    databaseUp = true;
  });

  it('answers /healthz on both listeners', async () => {
    expect((await http('GET', `${server.url}/healthz`)).status).toBe(200);
    expect(await http('GET', `${inside.url}/healthz`)).toMatchObject({ status: 200, body: { status: 'ok', service: 'svc' } });
  });

  it('reports readiness by dependency inside, and without naming any in public', async () => {
    expect((await http('GET', `${inside.url}/readyz`)).body).toMatchObject({ status: 'ready', checks: { database: 'ok' } });
    // The public readiness answer names no dependency.
    expect((await http('GET', `${server.url}/readyz`)).body).toEqual({ status: 'ready' });
    databaseUp = false;
    expect(await http('GET', `${inside.url}/readyz`)).toMatchObject({ status: 503, body: { checks: { database: 'unavailable' } } });
    expect(await http('GET', `${server.url}/readyz`)).toEqual(expect.objectContaining({ status: 503, body: { status: 'not ready' } }));
  });

  it('drops internal headers on the public listener only', async () => {
    const headers = { 'x-internal-claims': 'captured', 'x-internal-client-address': 'forged', 'x-other': 'kept' };
    // A caller cannot smuggle internal headers past a public listener.
    const echoed = await http('GET', `${server.url}/echo-headers`, { headers });
    expect(echoed.body).not.toHaveProperty('x-internal-claims');
    expect(echoed.body).not.toHaveProperty('x-internal-client-address');
    expect(echoed.body['x-other']).toBe('kept');
    // Inside, services pass claims to each other in that header: it must arrive.
    const behind = await http('GET', `${inside.url}/echo-headers`, { headers });
    expect(behind.body).toMatchObject(headers);
  });

  it('keeps a caller request id, mints one otherwise, and shows routes the same id it answers with', async () => {
    const given = await http('GET', `${server.url}/echo-headers`, { headers: { 'x-request-id': 'abc-2' } });
    expect([given.headers.get('x-request-id'), given.body['x-request-id']]).toEqual(['abc-2', 'abc-2']);
    const minted = await http('GET', `${server.url}/echo-headers`, { headers: { 'x-request-id': 'not a valid id' } });
    expect(minted.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(minted.body['x-request-id']).toBe(minted.headers.get('x-request-id'));
    expect(minted.headers.get('x-powered-by')).toBeNull();
  });

  it('serves /metrics on the internal listener only, labelled by route pattern', async () => {
    expect((await http('GET', `${server.url}/metrics`)).status).toBe(404);
    expect((await http('GET', `${server.url}/boom`)).status).toBe(500);
    expect((await http('GET', `${server.url}/orders/42`)).status).toBe(200);

    const metrics = await http('GET', `${inside.url}/metrics`);
    expect(metrics.body).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/boom"[^}]*status="500"/);
    // By pattern, not raw path: ids would make one series per order.
    expect(metrics.body).toMatch(/http_request_duration_seconds_count\{[^}]*listener="public"[^}]*route="\/orders\/:id"[^}]*status="200"/);
    expect(metrics.body).not.toContain('/orders/42');
  });

  it('trusts X-Forwarded-For from the configured proxies in public, and never inside', async () => {
    const logger = createLogger('svc', 'silent');
    const { app, internal } = createService({ name: 'svc', logger, trustProxy: ['loopback'] });
    for (const listener of [app, internal]) listener.get('/ip', (req, res) => void res.json({ ip: req.ip }));
    const edge = await listen(app, 0);
    const behind = await listen(internal, 0);
    try {
      const headers = { 'x-forwarded-for': '203.0.113.7' };
      expect((await http('GET', `${edge.url}/ip`, { headers })).body).toEqual({ ip: '203.0.113.7' });
      expect((await http('GET', `${behind.url}/ip`, { headers })).body.ip).toMatch(/127\.0\.0\.1$/);
    } finally {
      await edge.close();
      await behind.close();
    }
  });
});
