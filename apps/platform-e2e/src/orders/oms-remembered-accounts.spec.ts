import { randomUUID } from 'node:crypto';
import { ACCOUNTS_LISTENING_EVENT } from '@trading/accounts-directory';
import { signEvent } from '@trading/events';
import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { ServiceDatabases } from '../support/invariants';
import { startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

const alice = DEMO_USERS[0]!;
const aliceCash = DEMO_ACCOUNTS[0]!.id; // USD

/**
 * The OMS remembers an account between orders (no call to accounts per order) only
 * while accounts' signed announcements are heard, and forgets it the moment accounts announces
 * a change. Attacks on that memory: an account restricted by hand must stop trading, and with
 * accounts silent (or someone forging its "listening") every order must be asked about again.
 */
describe('the accounts the OMS remembers', () => {
  let p: TestPlatform;
  let db: ServiceDatabases;
  let token: string;
  const order = () =>
    http('POST', `${p.urls.api}/oms/order`, {
      token,
      body: { accountId: aliceCash, symbol: 'AAPL', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', quantity: '1', limitPrice: '1.00' },
    });
  const announcements = () => `${p.config.PLATFORM_DB_PREFIX}accounts:changes`;

  beforeAll(async () => {
    p = await startOrdersPlatform({ OMS_COMMISSION_RATE: '0' });
    db = new ServiceDatabases(p);
    token = await patSession(p, alice.email, 'READ_WRITE');
    await p.oms.feed.setPrice('AAPL', '190.00');
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await p?.stop();
  });

  it('an account restricted by hand in the accounts database stops trading once accounts announces it, though the OMS remembered it', async () => {
    await until(async () => p.oms.accounts.serving, Boolean, 'the OMS to hear accounts');
    expect((await order()).status).toBe(201); // remembered from here on
    await db.query('accounts', "UPDATE accounts SET status = 'RESTRICTED' WHERE id = $1", [aliceCash]);
    const refused = await until(order, (r) => r.status !== 201, 'the restricted account to be refused');
    expect(refused).toMatchObject({ status: 422, body: { field: 'accountId' } });
    expect(refused.body.detail).toContain('RESTRICTED');
    // Refused because it heard the change, not because it stopped listening.
    expect(p.oms.accounts.serving).toBe(true);
    await db.query('accounts', "UPDATE accounts SET status = 'ACTIVE' WHERE id = $1", [aliceCash]);
    await until(order, (r) => r.status === 201, 'the account to trade again');
  });

  it('with accounts silent the OMS stops answering from memory within seconds, and a forged "listening" does not revive it', async () => {
    await until(async () => p.oms.accounts.serving, Boolean, 'the OMS to hear accounts');
    expect((await order()).status).toBe(201);
    await p.services.accounts.crash();
    try {
      await until(
        async () => p.oms.accounts.serving,
        (serving) => !serving,
        'the OMS to notice accounts is silent',
      );
      // Forged: unsigned, and signed by another service's key (the OMS's own), both with a fresh time.
      const forged = { eventId: randomUUID(), type: ACCOUNTS_LISTENING_EVENT, payload: { at: Date.now() } };
      await p.events.log.append(announcements(), forged);
      await p.events.log.append(announcements(), signEvent({ ...forged, eventId: randomUUID() }, p.identityOf('oms').SERVICE_KEY));
      await new Promise((r) => setTimeout(r, 300));
      expect(p.oms.accounts.serving).toBe(false);
      // So the order is asked about, and accounts cannot answer.
      expect(await order()).toMatchObject({ status: 503 });
    } finally {
      await p.services.accounts.restart();
    }
    await until(async () => p.oms.accounts.serving, Boolean, 'the OMS to hear accounts again');
    expect((await order()).status).toBe(201);
  }, 60_000);
});
