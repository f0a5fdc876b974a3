import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

const alice = DEMO_USERS[0]!;
const aliceCash = DEMO_ACCOUNTS[0]!.id; // 10000 USD, no positions

/**
 * Market orders end to end: a market order wakes the engine, and a pass that filled
 * wakes the outbox relay, so placement → fill → settlement does not wait for either to come round.
 * Here both come round once an hour: only the wakes can fill and settle the order.
 */
describe('a market order does not wait for the engine or the relay to come round', () => {
  let p: TestPlatform;
  let writer: string;
  const api = (path: string) => `${p.urls.api}${path}`;

  beforeAll(async () => {
    p = await startOrdersPlatform({ OMS_ENGINE_INTERVAL_MS: '3600000', OMS_RELAY_INTERVAL_MS: '3600000' });
    writer = await patSession(p, alice.email, 'READ_WRITE');
    await p.oms.feed.setPrice('MSFT', '100.00');
  }, 60_000);
  afterAll(() => p?.stop());

  it('fills at once and is applied in banking and accounts; a resting limit order is left for the passes', async () => {
    const order = (type: 'MARKET' | 'LIMIT', extra: Record<string, string> = {}) =>
      http('POST', api('/oms/order'), {
        token: writer,
        body: { accountId: aliceCash, symbol: 'MSFT', side: 'BUY', type, timeInForce: 'DAY', quantity: '2', ...extra },
      });
    const resting = await order('LIMIT', { limitPrice: '50.00', timeInForce: 'GTC' });
    expect(resting.status).toBe(201);
    const market = await order('MARKET');
    expect(market.status).toBe(201);
    const filled = await until(
      () => http('GET', api(`/oms/${aliceCash}/order/${market.body.id}`), { token: writer }),
      (r) => r.body.status === 'FILLED',
      'the market order filled',
    );
    expect(filled.body.filledQuantity).toBe('2');
    await until(
      () => http('GET', api(`/accounts/${aliceCash}/position?symbol=MSFT`), { token: writer }),
      (r) => r.body.quantity === '2',
      'the fill applied in accounts',
    );
    await until(
      () => http('GET', api(`/banking/${aliceCash}/balance/USD`), { token: writer }),
      // Only the resting order's hold is left: the market order's was captured.
      (r) => r.body.held === resting.body.reservedAmount,
      'the fill applied in banking',
    );
    expect((await http('GET', api(`/oms/${aliceCash}/order/${resting.body.id}`), { token: writer })).body.status).toBe('NEW');
  });
});
