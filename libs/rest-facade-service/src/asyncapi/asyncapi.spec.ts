import { Parser } from '@asyncapi/parser';
import { z } from '@trading/config';
import { createLogger } from '@trading/logging';
import { MemoryStore } from '@trading/redis';
import { listen } from '@trading/service';
import { http, testKeys } from '@trading/testing';
import { WEBHOOK_EVENT_TYPES } from '@trading/webhooks';
// The validator through the package's export, as the e2e suites take it.
import { asyncApiMessageValidator, createRestFacadeApp, loadFacadeConfig } from '../app';
import { orderUpdate, webhookEventSchemas } from '../contract';
import { MARKET_EVENTS_PATH } from '../market-events/market-events.route';
import { ORDER_EVENTS_PATH } from '../order-events/order-events.route';
import { asyncApiDocument } from './asyncapi';

const ACCOUNT = '0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a01';
const order = {
  id: '5d1f0c2e-7b3a-4c9d-9e8f-1a2b3c4d5e6f',
  accountId: ACCOUNT,
  clientOrderId: 'my-order-1',
  symbol: 'AAPL',
  currency: 'USD',
  side: 'BUY',
  type: 'LIMIT',
  timeInForce: 'DAY',
  quantity: '10',
  filledQuantity: '0',
  remainingQuantity: '10',
  limitPrice: '189.84',
  stopPrice: null,
  averageFillPrice: null,
  grossAmount: '0.00',
  commission: '0.00',
  reservedAmount: '1899.40',
  status: 'NEW',
  statusReason: null,
  createdAt: '2026-11-21T14:03:12.000Z',
  updatedAt: '2026-11-21T14:03:12.000Z',
  submittedAt: '2026-11-21T14:03:12.000Z',
  triggeredAt: null,
  filledAt: null,
  cancelledAt: null,
  expiredAt: null,
  rejectedAt: null,
  expiresAt: null,
  trailPrice: null,
  trailPercent: null,
  highWaterMark: null,
  orderClass: 'SIMPLE',
  parentOrderId: null,
  leg: null,
  replaces: null,
  replacedBy: null,
};
const transaction = {
  id: '7c0d6a51-3f2e-4b1a-9c8d-0e1f2a3b4c5d',
  accountId: ACCOUNT,
  type: 'DEPOSIT',
  state: 'COMPLETED',
  amount: '500.00',
  currency: 'USD',
  reference: null,
  rejectReason: null,
  createdAt: '2026-11-21T14:00:00.000Z',
  updatedAt: '2026-11-21T14:05:00.000Z',
  completedAt: '2026-11-21T14:05:00.000Z',
  cancelledAt: null,
  rejectedAt: null,
};
const envelope = (type: string, data: unknown) => ({
  id: 'msg_2b9d7c4e1a014e2f8a615c3d0b7e9a10',
  type,
  timestamp: '2026-11-21T14:05:00.000Z',
  data,
});

async function parse(document: unknown) {
  const { document: parsed, diagnostics } = await new Parser().parse(JSON.stringify(document));
  return { parsed, diagnostics: diagnostics.map((d) => ({ severity: d.severity, code: String(d.code), path: d.path.join('.') })) };
}

describe('AsyncAPI document (event streams and webhooks)', () => {
  const doc = asyncApiDocument('https://api.trading.example/v1');

  it('is a valid AsyncAPI 3.0.0 document: no errors, no warnings', async () => {
    const { parsed, diagnostics } = await parse(doc);
    expect(parsed).toBeDefined();
    expect(diagnostics.filter((d) => d.severity === 0)).toEqual([]);
    expect(diagnostics.filter((d) => d.severity === 1)).toEqual([]);
    // The one remark: 3.1.0 exists. 3.0.0 is kept on purpose, the version most tools read.
    expect(diagnostics).toEqual([{ severity: 2, code: 'asyncapi-latest-version', path: 'asyncapi' }]);
  });

  it('describes the two streams at the paths the routes serve, and one webhook message per event type', async () => {
    const { parsed } = await parse(doc);
    const channels = parsed!.channels();
    const messageNames = (id: string) =>
      channels
        .get(id)!
        .messages()
        .all()
        .map((m) => m.name());
    expect(channels.get('orderEvents')!.address()).toBe(ORDER_EVENTS_PATH.replace(':accountId', '{accountId}'));
    expect(messageNames('orderEvents')).toEqual(['order', 'fill', 'gap', 'end']);
    expect(channels.get('marketEvents')!.address()).toBe(MARKET_EVENTS_PATH);
    expect(messageNames('marketEvents')).toEqual(['quote', 'end']);
    expect(messageNames('webhooks').sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    for (const message of channels.get('webhooks')!.messages().all()) {
      const headers = message.headers()!.json() as { required: string[] };
      expect([message.name(), headers.required]).toEqual([message.name(), ['webhook-id', 'webhook-timestamp', 'webhook-signature']]);
    }
    expect(parsed!.servers().get('api')!.url()).toBe('https://api.trading.example/v1');
  });

  it('has the client receive every stream with a bearer token, and the vendor endpoint receive the webhooks', async () => {
    const { parsed } = await parse(doc);
    const operations = Object.fromEntries(
      parsed!
        .operations()
        .all()
        .map((op) => [op.id(), { action: op.action(), security: op.security().map((req) => req.all().map((s) => s.scheme().type())) }]),
    );
    expect(operations).toEqual({
      receiveOrderEvents: { action: 'receive', security: [['oauth2'], ['http']] },
      receiveMarketEvents: { action: 'receive', security: [['oauth2'], ['http']] },
      receiveWebhooks: { action: 'receive', security: [] },
    });
    expect(doc.components.securitySchemes.readOrders.scopes).toEqual(['read:orders']);
    expect(doc.components.securitySchemes.readMarket.scopes).toEqual(['read:market']);
    expect(doc.components.securitySchemes.patSession).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('is made from the zod schemas the facade validates with', () => {
    const { $schema: _s, ...fromContract } = z.toJSONSchema(orderUpdate, { target: 'draft-07' }) as Record<string, unknown>;
    expect(doc.components.schemas['OrderUpdate']).toEqual(fromContract);
    for (const type of WEBHOOK_EVENT_TYPES) expect(webhookEventSchemas[type].safeParse(envelope(type, {})).success).toBe(false);
  });

  it('accepts the webhook bodies the platform sends, and refuses a body missing data.order.id or of the wrong type', () => {
    const check = asyncApiMessageValidator(doc);
    expect(check('order.accepted', envelope('order.accepted', { order }))).toEqual([]);
    expect(check('order.replaced', envelope('order.replaced', { order: { ...order, status: 'CANCELLED', replacedBy: order.id } }))).toEqual(
      [],
    );
    expect(check('funding.deposit.settled', envelope('funding.deposit.settled', { transaction }))).toEqual([]);
    expect(
      check('grant.revoked', envelope('grant.revoked', { subject: 'u_1', clientId: 'tci_demo', revokedAt: '2026-11-21T14:05:00.000Z' })),
    ).toEqual([]);

    const { id: _id, ...withoutId } = order;
    expect(check('order.accepted', envelope('order.accepted', { order: withoutId }))).toEqual([
      "/data/order must have required property 'id'",
    ]);
    expect(check('order.accepted', envelope('order.filled', { order }))).toEqual(['/type must be equal to constant']);
    expect(check('order.accepted', envelope('order.accepted', { transaction }))).not.toEqual([]);
    expect(check('funding.deposit.settled', envelope('funding.deposit.settled', { transaction: { ...transaction, amount: 500 } }))).toEqual(
      ['/data/transaction/amount must be string'],
    );
    expect(check('order.accepted', { ...envelope('order.accepted', { order }), id: 'not-a-message-id' })).toEqual([
      '/id must match pattern "^msg_[0-9a-f]{32}$"',
    ]);
    expect(check('order.bogus', envelope('order.bogus', { order }))).toEqual(['no webhook message for the event type "order.bogus"']);
  });

  it('describes the stream events as the streams send them', () => {
    const check = asyncApiMessageValidator(doc);
    // The same validator over the stream messages: an order event's data is the OrderUpdate itself.
    const streamDoc = { ...doc, channels: { webhooks: { messages: { order: { $ref: '#/components/messages/order' } } } } };
    const stream = asyncApiMessageValidator(streamDoc);
    expect(stream('order', order)).toEqual([]);
    expect(stream('order', { ...order, fills: [] })).toEqual(['/ must NOT have additional properties']);
    expect(check('order', order)).toEqual(['no webhook message for the event type "order"']);
  });

  it('is served at /v1/asyncapi.json without a token, for this deployment, cacheable', async () => {
    const app = await createRestFacadeApp(
      loadFacadeConfig({ ...testKeys().env('rest-facade'), FACADE_PUBLIC_URL: 'https://api.trading.example/v1' }),
      { logger: createLogger('f', 'silent'), store: new MemoryStore() },
    );
    const server = await listen(app.app, 0, '127.0.0.1');
    try {
      const { status, headers, body } = await http('GET', `${server.url}/v1/asyncapi.json`);
      expect([status, headers.get('content-type'), headers.get('cache-control')]).toEqual([
        200,
        'application/json; charset=utf-8',
        'public, max-age=300',
      ]);
      expect(body).toEqual(JSON.parse(JSON.stringify(doc)));
      expect(body.components.securitySchemes.readOrders.flows.authorizationCode.tokenUrl).toBe(
        'https://api.trading.example/v1/oauth/token',
      );
      expect((await parse(body)).diagnostics.filter((d) => d.severity < 2)).toEqual([]);
      expect(asyncApiMessageValidator(body)('order.filled', envelope('order.filled', { order: { ...order, status: 'FILLED' } }))).toEqual(
        [],
      );
    } finally {
      await server.close();
      await app.close();
    }
  });
});
