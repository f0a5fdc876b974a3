import { randomUUID } from 'node:crypto';
import { columnListGaps, http } from '@trading/testing';
import { HOLD_COLUMNS } from './holds.service';
import { bookCompletedDeposit } from '../funding/funding.service';
import { ENTITY, startBankingHarness, type BankingHarness } from '../testing/banking-harness';

describe('internal hold API', () => {
  let h: BankingHarness;
  let account: string;

  beforeAll(async () => {
    h = await startBankingHarness();
    account = h.openAccount('u');
    await bookCompletedDeposit(h.service.dataSource, account, 'USD', '1000', 'opening');
  });
  afterAll(async () => {
    await h?.close();
  });

  const balance = async () =>
    (
      await h.gql(
        ENTITY('balance(currency: "USD") { cash held availableToTrade availableToWithdraw }'),
        { r: [{ __typename: 'Account', id: account }] },
        { sub: 'u' },
      )
    ).body.data._entities[0].balance;
  const activity = async () =>
    (
      await h.gql(
        ENTITY('cashActivity { nodes { type amount balanceAfter description } }'),
        { r: [{ __typename: 'Account', id: account }] },
        { sub: 'u' },
      )
    ).body.data._entities[0].cashActivity.nodes;

  it('names every column of a hold in the prepared hold statement', async () => {
    expect(await columnListGaps(h.service.dataSource, 'holds', HOLD_COLUMNS)).toEqual({ missing: [], unknown: [] });
  });

  it('places a hold once per order id: a retry returns it, other terms are refused, too much is refused', async () => {
    const body = { orderId: 'ord-1', accountId: account, currency: 'USD', amount: '300' };
    const placed = await h.holds('POST', '', body);
    expect(placed.status).toBe(201);
    expect(placed.body).toMatchObject({
      orderId: 'ord-1',
      accountId: account,
      currency: 'USD',
      amount: '300.00',
      state: 'HELD',
      capturedAmount: null,
    });
    const again = await h.holds('POST', '', { ...body, amount: '300.00' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(placed.body);
    expect((await h.holds('POST', '', { ...body, amount: '301' })).body).toMatchObject({
      status: 422,
      code: 'UNPROCESSABLE',
      field: 'orderId',
    });
    expect(await balance()).toEqual({ cash: '1000.00', held: '300.00', availableToTrade: '700.00', availableToWithdraw: '700.00' });
    expect((await h.holds('POST', '', { ...body, orderId: 'ord-big', amount: '700.01' })).body).toMatchObject({
      status: 422,
      code: 'UNPROCESSABLE',
      field: 'amount',
    });
  });

  it('releases idempotently, and a released hold cannot be captured', async () => {
    await h.holds('POST', '', { orderId: 'ord-2', accountId: account, currency: 'USD', amount: '100' });
    const released = await h.holds('POST', '/ord-2/release', { accountId: account });
    expect(released.body).toMatchObject({ state: 'RELEASED', releasedAmount: '100.00' });
    expect((await h.holds('POST', '/ord-2/release', { accountId: account })).body).toEqual(released.body);
    expect((await h.holds('POST', '/ord-2/capture', { accountId: account, amount: '10' })).body).toMatchObject({
      status: 409,
      code: 'CONFLICT',
    });
    expect(await balance()).toMatchObject({ held: '300.00', availableToTrade: '700.00' });
  });

  it('captures once: the captured part leaves as a TRADE, the rest is released', async () => {
    const captured = await h.holds('POST', '/ord-1/capture', { accountId: account, amount: '250.25', description: 'Bought 5 AAPL' });
    expect(captured.status).toBe(200);
    expect(captured.body).toMatchObject({ state: 'CAPTURED', capturedAmount: '250.25', releasedAmount: '49.75' });
    expect((await h.holds('POST', '/ord-1/capture', { accountId: account, amount: '250.25' })).body).toEqual(captured.body);
    expect((await h.holds('POST', '/ord-1/capture', { accountId: account, amount: '1' })).body).toMatchObject({
      status: 409,
      code: 'CONFLICT',
    });
    expect((await h.holds('POST', '/ord-1/release', { accountId: account })).body).toMatchObject({ status: 409, code: 'CONFLICT' });
    expect(await balance()).toEqual({ cash: '749.75', held: '0.00', availableToTrade: '749.75', availableToWithdraw: '749.75' });
    // Holds and releases are not cash movements; the capture is.
    expect(await activity()).toEqual([
      { type: 'TRADE', amount: '-250.25', balanceAfter: '749.75', description: 'Bought 5 AAPL' },
      { type: 'DEPOSIT', amount: '1000.00', balanceAfter: '1000.00', description: 'opening' },
    ]);
  });

  it('refuses a capture above the held amount and bad input, naming the field', async () => {
    await h.holds('POST', '', { orderId: 'ord-3', accountId: account, currency: 'USD', amount: '10' });
    expect((await h.holds('POST', '/ord-3/capture', { accountId: account, amount: '10.01' })).body).toMatchObject({
      status: 422,
      field: 'amount',
    });
    expect((await h.holds('POST', '/ord-3/capture', { accountId: account, amount: '1.001' })).body).toMatchObject({
      status: 400,
      field: 'amount',
    });
    expect((await h.holds('POST', '/nope/release', { accountId: account })).body).toMatchObject({ status: 404, field: 'orderId' });
    const base = { orderId: 'ord-4', accountId: account, currency: 'USD', amount: '1' };
    for (const [patch, field] of [
      [{ orderId: 'has space' }, 'orderId'],
      [{ accountId: 'x' }, 'accountId'],
      [{ currency: 'ABC' }, 'currency'],
      [{ amount: '0' }, 'amount'],
      [{ amount: 5 }, 'amount'],
    ] as const) {
      expect((await h.holds('POST', '', { ...base, ...patch })).body).toMatchObject({ status: 400, code: 'BAD_USER_INPUT', field });
    }
    expect((await h.holds('GET', `/ord-3?accountId=${account}`)).body).toMatchObject({ state: 'HELD', amount: '10.00' });
  });

  it('replaces a hold in one step: the old keeps what its fills cost, the new one holds from cash plus what that frees; idempotent; a refusal changes nothing', async () => {
    const other = h.openAccount('u');
    await bookCompletedDeposit(h.service.dataSource, other, 'USD', '1000', 'opening');
    const held = async () =>
      (
        await h.gql(
          ENTITY('balance(currency: "USD") { cash held availableToTrade }'),
          { r: [{ __typename: 'Account', id: other }] },
          { sub: 'u' },
        )
      ).body.data._entities[0].balance;
    expect((await h.holds('POST', '', { orderId: 'rep-1', accountId: other, currency: 'USD', amount: '600' })).status).toBe(201);
    // 400 free + the 600 given back covers 900.
    const grown = await h.holds('POST', '/rep-1/replace', { accountId: other, replacementOrderId: 'rep-2', keep: '0.00', amount: '900' });
    expect(grown.body).toMatchObject({ orderId: 'rep-2', amount: '900.00', state: 'HELD' });
    expect((await h.holds('GET', `/rep-1?accountId=${other}`)).body).toMatchObject({ state: 'RELEASED' });
    expect(await held()).toEqual({ cash: '1000.00', held: '900.00', availableToTrade: '100.00' });
    const again = await h.holds('POST', '/rep-1/replace', { accountId: other, replacementOrderId: 'rep-2', keep: '0.00', amount: '900' });
    expect(again.body).toEqual(grown.body);
    // 100 free + 800 freed is not 950: refused, nothing moves.
    expect(
      (await h.holds('POST', '/rep-2/replace', { accountId: other, replacementOrderId: 'rep-3', keep: '100.00', amount: '950' })).body,
    ).toMatchObject({ status: 422, field: 'amount' });
    expect(await held()).toEqual({ cash: '1000.00', held: '900.00', availableToTrade: '100.00' });
    const shrunk = await h.holds('POST', '/rep-2/replace', {
      accountId: other,
      replacementOrderId: 'rep-3',
      keep: '100.00',
      amount: '200',
    });
    expect(shrunk.body).toMatchObject({ orderId: 'rep-3', amount: '200.00', state: 'HELD' });
    expect((await h.holds('GET', `/rep-2?accountId=${other}`)).body).toMatchObject({ state: 'HELD', amount: '100.00' });
    expect(await held()).toEqual({ cash: '1000.00', held: '300.00', availableToTrade: '700.00' });
    expect(
      (await h.holds('POST', '/rep-1/replace', { accountId: other, replacementOrderId: 'rep-4', keep: '0.00', amount: '1' })).body,
    ).toMatchObject({ status: 409, field: 'orderId' });
    expect(
      (await h.holds('POST', '/rep-3/replace', { accountId: other, replacementOrderId: 'rep-5', keep: '300.00', amount: '1' })).body,
    ).toMatchObject({ status: 422, field: 'keep' });
  });

  it('refuses callers without valid internal claims (401) or without internal:holds (403)', async () => {
    const body = { orderId: 'ord-x', accountId: randomUUID(), currency: 'USD', amount: '1' };
    const none = await http('POST', `${h.url}/internal/holds`, { body });
    expect(none.status).toBe(401);
    expect((await http('POST', `${h.url}/internal/holds`, { body, headers: { 'x-internal-claims': 'forged' } })).status).toBe(401);
    const withoutHolds = await h.holds('POST', '', body, { scope: ['read:banking'] });
    expect(withoutHolds.status).toBe(403);
    expect(withoutHolds.body.code).toBe('INSUFFICIENT_SCOPE');
    // More than the OMS may ever claim towards banking: not believed at all.
    expect((await h.holds('POST', '/ord-1/release', { accountId: account }, { scope: ['write:banking', 'internal:holds'] })).status).toBe(
      401,
    );
  });

  it('attack: the gateway, or a facade, signing internal:holds gets nothing (only the OMS may hold that scope)', async () => {
    const body = { orderId: 'ord-gw', accountId: account, currency: 'USD', amount: '1' };
    for (const from of ['gateway', 'rest-facade', 'accounts'] as const) {
      expect((await h.holds('POST', '', body, { from })).status).toBe(401);
      expect((await h.holds('POST', '/ord-3/release', { accountId: account }, { from })).status).toBe(401);
    }
    expect(await balance()).toMatchObject({ held: '10.00' });
  });

  it("attack: the OMS cannot hold another user's account, nor release or capture a hold naming another user or account", async () => {
    const mallory = h.openAccount('mallory');
    await bookCompletedDeposit(h.service.dataSource, mallory, 'USD', '50', 'opening');
    // Acting for mallory on u's account: accounts says the account is not hers.
    expect(
      (await h.holds('POST', '', { orderId: 'ord-m1', accountId: account, currency: 'USD', amount: '5' }, { userId: 'mallory' })).body,
    ).toMatchObject({ status: 404, field: 'accountId' });
    // u's hold ord-3, released by mallory or naming mallory's account: not found, nothing moves.
    expect((await h.holds('POST', '/ord-3/release', { accountId: account }, { userId: 'mallory' })).body).toMatchObject({
      status: 404,
      field: 'orderId',
    });
    expect((await h.holds('POST', '/ord-3/release', { accountId: mallory })).body).toMatchObject({ status: 404, field: 'orderId' });
    expect((await h.holds('POST', '/ord-3/capture', { accountId: mallory, amount: '10' }, { userId: 'mallory' })).body).toMatchObject({
      status: 404,
    });
    expect((await h.holds('POST', '/ord-3/release', {})).body).toMatchObject({ status: 400, field: 'accountId' });
    expect(await balance()).toMatchObject({ held: '10.00' });
  });

  it('serves the hold API and GraphQL on the internal listener only; the public listener drops a claims header', async () => {
    const header = await h.keys.sign({ sub: 'u', sid: 'oms', kind: 'pat', scope: ['internal:holds'] }, 'banking', 'oms');
    const body = { orderId: 'ord-pub', accountId: account, currency: 'USD', amount: '1' };
    expect((await http('POST', `${h.publicUrl}/internal/holds`, { body, headers: { 'x-internal-claims': header } })).status).toBe(404);
    expect(
      (await http('POST', `${h.publicUrl}/graphql`, { body: { query: '{ __typename }' }, headers: { 'x-internal-claims': header } }))
        .status,
    ).toBe(404);
    expect((await http('GET', `${h.publicUrl}/metrics`)).status).toBe(404);
    expect((await http('GET', `${h.publicUrl}/readyz`)).body).toEqual({ status: 'ready' });
    expect((await http('GET', `${h.url}/readyz`)).body).toMatchObject({ status: 'ready', checks: { database: 'ok' } });
  });
});
