import { createTradingApiClient } from '@trading/api-client';
import { admin } from '../support/oauth-helpers';
import { startOrdersPlatform, until } from '../support/orders-platform';
import { newUser } from '../support/pat-helpers';
import { inDays, type TestPlatform } from '../support/test-platform';

/**
 * A user's script written with the client generated from the OpenAPI document
 * (libs/api-client). Every call below is typed from the document, so this suite fails to
 * compile when the API and its document part ways, and fails at run time when the answers do.
 */
describe('the generated TypeScript client against the running API', () => {
  let p: TestPlatform;

  beforeAll(async () => {
    p = await startOrdersPlatform();
    await p.oms.feed.setPrice('AAPL', '189.90');
  }, 60_000);
  afterAll(() => p?.stop());

  it('logs in with a PAT, funds an account, previews, places and follows an order, and reads problems by field', async () => {
    const user = await newUser(p);
    const pat = await admin(p, 'POST', '/pats', { email: user.email, name: 'script', scope: 'READ_WRITE', expires: inDays(5) });
    const opened = await admin(p, 'POST', '/accounts', { email: user.email, type: 'CASH', currency: 'USD' });
    const accountId = opened.body.accountId as string;

    const held: { session?: string } = {};
    const api = createTradingApiClient({ baseUrl: p.urls.api, token: () => held.session });
    const login = await api.POST('/pat/login', { body: { token: pat.body.token } });
    expect(login.response.status).toBe(200);
    held.session = login.data!.token;

    const accounts = await api.GET('/accounts');
    expect(accounts.data!.accounts).toEqual([
      expect.objectContaining({ id: accountId, type: 'CASH', baseCurrency: 'USD', status: 'ACTIVE' }),
    ]);

    const deposit = await api.POST('/banking/deposit', {
      params: { header: { 'Idempotency-Key': 'first-deposit' } },
      body: { accountId, amount: '2500.00', currency: 'USD', sandboxOutcome: 'COMPLETED' },
    });
    expect(deposit.data).toMatchObject({ type: 'DEPOSIT', state: 'PENDING', amount: '2500.00' });
    const again = await api.POST('/banking/deposit', {
      params: { header: { 'Idempotency-Key': 'first-deposit' } },
      body: { accountId, amount: '2500.00', currency: 'USD', sandboxOutcome: 'COMPLETED' },
    });
    expect(again.data!.id).toBe(deposit.data!.id);
    await until(
      () => api.GET('/banking/{accountId}/balance/{ccy}', { params: { path: { accountId, ccy: 'USD' } } }),
      (r) => r.data?.availableToTrade === '2500.00',
      'the deposit to clear',
    );

    const order = {
      accountId,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity: '3',
      limitPrice: '190.00',
    } as const;
    const preview = await api.POST('/oms/what-if', { body: order });
    expect(preview.data).toMatchObject({ wouldBeRejected: false, estimatedGrossAmount: '570.00', cash: { before: '2500.00' } });
    const placed = await api.POST('/oms/order', { body: { ...order, clientOrderId: 'script-1' } });
    expect(placed.response.status).toBe(201);
    const filled = await until(
      () => api.GET('/oms/{accountId}/order/{orderId}', { params: { path: { accountId, orderId: placed.data!.id } } }),
      (r) => r.data?.status === 'FILLED',
      'the fill',
    );
    expect(filled.data!.fills).toEqual([expect.objectContaining({ quantity: '3', price: '190.00' })]);
    const positions = await until(
      () => api.GET('/accounts/{accountId}/positions', { params: { path: { accountId }, query: { limit: 10 } } }),
      (r) => r.data?.positions.length === 1,
      'the position',
    );
    expect(positions.data!.positions[0]).toMatchObject({
      symbol: 'AAPL',
      quantity: '3',
      averageCost: expect.stringMatching(/^190\.\d{2,}$/),
    });

    // Refusals come back as typed problems naming the field.
    const refused = await api.POST('/oms/order', { body: { ...order, quantity: '100000' } });
    expect(refused.response.status).toBe(422);
    expect(refused.error).toMatchObject({ code: 'UNPROCESSABLE', field: 'quantity' });
    const unknown = await api.GET('/accounts/{accountId}/margin', {
      params: { path: { accountId: '7f1e4c2a-0000-4000-8000-000000000000' } },
    });
    expect([unknown.response.status, unknown.error?.code]).toEqual([404, 'NOT_FOUND']);
  }, 60_000);
});
