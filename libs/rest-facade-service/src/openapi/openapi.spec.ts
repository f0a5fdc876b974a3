import { createLogger } from '@trading/logging';
import { MemoryStore } from '@trading/redis';
import { listen } from '@trading/service';
import { http, openApiResponseValidator, testKeys } from '@trading/testing';
import { SCOPES } from '@trading/auth';
import { z } from '@trading/config';
import { createRestFacadeApp, loadFacadeConfig } from '../app';
import { orderRequest } from '../contract';
import { MARKET_EVENTS_PATH, MARKET_EVENTS_SCOPES } from '../market-events/market-events.route';
import { ORDER_EVENTS_PATH, ORDER_EVENTS_SCOPES } from '../order-events/order-events.route';
import { AUTHENTICATED_AUTH_ROUTES, isPublicAuthPath } from '../proxy/auth-proxy';
import { ROUTES } from '../routes';
import { openApiDocument } from './openapi';

describe('OpenAPI document', () => {
  it('describes every route of the route table', () => {
    const paths = openApiDocument.paths as Record<string, Record<string, unknown>>;
    for (const route of ROUTES) {
      const template = route.path.replace(/:(\w+)/g, '{$1}');
      expect({ route: `${route.method} ${template}`, documented: !!paths[template]?.[route.method.toLowerCase()] }).toEqual({
        route: `${route.method} ${template}`,
        documented: true,
      });
    }
  });

  it("states exactly the credentials each operation's guard accepts (route table, auth's routes, public paths)", () => {
    const paths = openApiDocument.paths as unknown as Record<string, Record<string, { security: Array<Record<string, string[]>> }>>;
    const guards = new Map<string, Array<Record<string, string[]>>>();
    for (const route of ROUTES)
      guards.set(`${route.method} ${route.path.replace(/:(\w+)/g, '{$1}')}`, [{ oauth2: route.scopes }, { patSession: [] }]);
    guards.set(`GET ${ORDER_EVENTS_PATH.replace(/:(\w+)/g, '{$1}')}`, [{ oauth2: [...ORDER_EVENTS_SCOPES] }, { patSession: [] }]);
    guards.set(`GET ${MARKET_EVENTS_PATH}`, [{ oauth2: [...MARKET_EVENTS_SCOPES] }, { patSession: [] }]);
    for (const route of AUTHENTICATED_AUTH_ROUTES)
      guards.set(
        `${route.method} ${route.path}`,
        route.patSessionOnly ? [{ patSession: [] }] : [{ oauth2: route.scopes }, { patSession: [] }],
      );
    const documented: string[] = [];
    for (const [path, methods] of Object.entries(paths))
      for (const [method, op] of Object.entries(methods)) {
        const key = `${method.toUpperCase()} ${path}`;
        documented.push(key);
        // Public: the token endpoints and PAT login take no bearer token (the client or the PAT is the credential);
        // the webhook API takes the app's own client credentials (auth checks them), but for its list of event types.
        const byClient = path.startsWith('/webhooks/') && path !== '/webhooks/event-types';
        const expected = guards.get(key) ?? (isPublicAuthPath(path) ? (byClient ? [{ vendorClient: [] }] : []) : undefined);
        if (path === '/oauth/userinfo') continue; // auth's own bearer check (GET and POST), documented with its scope
        expect({ key, security: op.security }).toEqual({ key, security: expected ?? 'an operation with no guard in the route table' });
      }
    expect(documented).toEqual(expect.arrayContaining([...guards.keys()]));
  });

  it('documents every endpoint of the spec, and the live order events', () => {
    const spec = [
      'POST /oauth/token',
      'POST /oauth/revoke',
      'GET /oauth/authorize',
      'GET /oauth/userinfo',
      'GET /accounts',
      'GET /accounts/{accountId}/positions',
      'GET /accounts/{accountId}/position',
      'GET /accounts/{accountId}/margin',
      'GET /accounts/{accountId}/portfolios',
      'GET /banking/{accountId}/balance',
      'GET /banking/{accountId}/balance/{ccy}',
      'GET /banking/{accountId}/activity',
      'GET /banking/{accountId}/txn-activity',
      'POST /banking/deposit',
      'POST /banking/withdraw',
      'POST /banking/cancel-txn',
      'GET /oms/{accountId}/order/rules',
      'GET /oms/{accountId}/orders',
      'GET /oms/{accountId}/order/{orderId}',
      'GET /oms/{accountId}/trades',
      'POST /oms/what-if',
      'POST /oms/order',
      'DELETE /oms/order',
      'POST /pat/login',
      'POST /pat/revoke',
      'GET /pat/login-activity',
      'GET /oms/{accountId}/events',
    ];
    const paths = openApiDocument.paths as Record<string, Record<string, unknown>>;
    const missing = spec.filter((e) => {
      const [method, path] = e.split(' ') as [string, string];
      return !paths[path]?.[method.toLowerCase()];
    });
    expect(missing).toEqual([]);
  });

  it('names and tags every operation, states its security and rate-limit headers, and speaks to vendors', () => {
    const operations = Object.entries(openApiDocument.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ at: `${method} ${path}`, ...op })),
    );
    const ids = operations.map((op) => op.operationId);
    expect(ids.filter((id) => typeof id !== 'string')).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    for (const op of operations)
      expect({
        at: op.at,
        tag: ['OAuth', 'PATs', 'Accounts', 'Banking', 'Orders', 'Market data', 'Sandbox'].includes(op.tags?.[0]),
      }).toEqual({
        at: op.at,
        tag: true,
      });
    const placeOrder = (openApiDocument.paths as any)['/oms/order'].post;
    expect(placeOrder.security).toEqual([{ oauth2: ['write:orders'] }, { patSession: [] }]);
    expect(placeOrder.parameters.map((p: { name: string }) => p.name)).toContain('Idempotency-Key');
    expect(Object.keys(placeOrder.responses['201'].headers)).toEqual([
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'RateLimit-Policy',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'X-RateLimit-Budget',
    ]);
    expect(Object.keys(placeOrder.responses['429'].headers)).toContain('Retry-After');
    const oauth2 = (openApiDocument.components.securitySchemes as any).oauth2;
    expect(Object.keys(oauth2.flows.authorizationCode.scopes).sort()).toEqual([...SCOPES].sort());
    expect(JSON.stringify(openApiDocument)).not.toMatch(/spec §|§\d/);
  });

  it('is made from the schemas the facade validates requests with', () => {
    const documented = (openApiDocument.components.schemas as Record<string, unknown>)['OrderRequest'];
    const { $schema: _s, ...fromValidator } = z.toJSONSchema(orderRequest, { target: 'draft-2020-12' }) as Record<string, unknown>;
    expect(documented).toEqual(fromValidator);
    // …and that validator is what answers a bad body: the field the document requires.
    expect(orderRequest.safeParse({ accountId: 'x' }).success).toBe(false);
  });

  it('compiles, and its schemas accept and refuse as they should', () => {
    const check = openApiResponseValidator(openApiDocument);
    expect(() =>
      check('GET', '/accounts', 200, {
        accounts: [
          {
            id: '0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a01',
            number: 'DU1',
            type: 'CASH',
            status: 'ACTIVE',
            baseCurrency: 'USD',
            createdAt: '2026-11-21T10:00:00.000Z',
            nickname: null,
            tradeConfirmationEmails: true,
          },
        ],
      }),
    ).not.toThrow();
    expect(() => check('GET', '/accounts', 200, { accounts: [{ id: 'x' }] })).toThrow(/does not match/);
    expect(() =>
      check('GET', '/accounts', 401, { type: 't', title: 't', status: 401, detail: 'd', code: 'UNAUTHENTICATED' }),
    ).not.toThrow();
  });

  it("describes the webhook API's answers: the secret only where it is shown, the delivery log with its attempts", () => {
    const check = openApiResponseValidator(openApiDocument);
    const endpoint = {
      id: '0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a01',
      clientId: 'c_1',
      environment: 'DEV',
      url: 'http://localhost:3000/hooks',
      eventTypes: ['order.filled', 'grant.revoked'],
      enabled: true,
      description: null,
      disabledReason: null,
      failingSince: null,
      createdAt: '2026-11-21T10:00:00.000Z',
      updatedAt: '2026-11-21T10:00:00.000Z',
    };
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(() => check('POST', '/webhooks/endpoints', 201, { ...endpoint, secret })).not.toThrow();
    expect(() => check('POST', '/webhooks/endpoints', 201, endpoint)).toThrow(/secret/);
    expect(() => check('GET', '/webhooks/endpoints', 200, { endpoints: [endpoint] })).not.toThrow();
    expect(() => check('GET', '/webhooks/endpoints', 200, { endpoints: [{ ...endpoint, secret }] })).toThrow(/additional/);
    expect(() => check('PATCH', '/webhooks/endpoints/{endpointId}', 200, { ...endpoint, eventTypes: ['order.exploded'] })).toThrow();
    const delivery = {
      id: '1b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a02',
      endpointId: endpoint.id,
      messageId: `msg_${'a'.repeat(32)}`,
      eventType: 'order.filled',
      status: 'PENDING',
      attempts: 1,
      nextAttemptAt: '2026-11-21T10:05:00.000Z',
      deliveredAt: null,
      createdAt: '2026-11-21T10:00:00.000Z',
      lastStatusCode: 500,
      lastError: 'answered 500',
      attemptLog: [
        { attemptedAt: '2026-11-21T10:00:00.000Z', statusCode: 500, durationMs: 12, error: null, responseSnippet: 'answered 500' },
      ],
    };
    expect(() => check('GET', '/webhooks/deliveries', 200, { deliveries: [delivery], nextCursor: null })).not.toThrow();
    expect(() => check('POST', '/webhooks/deliveries/{deliveryId}/redeliver', 202, { ...delivery, status: 'RETRYING' })).toThrow();
    const deliveriesQuery = (openApiDocument.paths as any)['/webhooks/deliveries'].get.parameters.map((p: { name: string }) => p.name);
    expect(deliveriesQuery).toEqual(
      expect.arrayContaining(['endpointId', 'eventType', 'status', 'limit', 'cursor', 'client_assertion_type', 'client_assertion']),
    );
  });

  it('is served with interactive docs, without a token', async () => {
    const facade = await createRestFacadeApp(loadFacadeConfig(testKeys().env('rest-facade')), {
      logger: createLogger('f', 'silent'),
      store: new MemoryStore(),
    });
    const server = await listen(facade.app, 0, '127.0.0.1');
    try {
      const doc = await http('GET', `${server.url}/v1/openapi.json`);
      expect(doc).toMatchObject({ status: 200, body: { openapi: '3.1.0' } });
      const page = await http('GET', `${server.url}/docs`);
      expect(page.status).toBe(200);
      expect(page.body).toContain('swagger-ui-bundle.js');
      expect((await http('GET', `${server.url}/docs/assets/swagger-ui-bundle.js`)).status).toBe(200);
    } finally {
      await server.close();
      await facade.close();
    }
  });
});
