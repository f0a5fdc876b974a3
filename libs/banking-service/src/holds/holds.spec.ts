import { randomUUID } from 'node:crypto';
import { columnListGaps, http } from '@trading/testing';
import { HOLD_COLUMNS, HoldsService } from './holds.service';
import { bookCompletedDeposit } from '../funding/funding.service';
import { SaleSettlements } from '../settlement/sale-settlement';
import { SettlementService } from '../settlement/settlement.service';
import { lockAccountCurrency } from '../ledger/ledger';
import { ENTITY, eventually, startBankingHarness, type BankingHarness } from '../testing/banking-harness';

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
      detail: 'Insufficient funds: 700.00 USD available to trade',
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

  /** A fresh account of user u with `amount` USD of settled cash. */
  const funded = async (amount = '1000') => {
    const id = h.openAccount('u');
    await bookCompletedDeposit(h.service.dataSource, id, 'USD', amount, 'opening');
    return id;
  };
  const balanceOf = async (id: string) =>
    (await h.gql(ENTITY('balance(currency: "USD") { cash held availableToTrade }'), { r: [{ __typename: 'Account', id }] }, { sub: 'u' }))
      .body.data._entities[0].balance;
  const entriesOf = (orderId: string) =>
    h.service.dataSource.query(`SELECT kind, description FROM journal_entries WHERE hold_order_id = $1 ORDER BY seq`, [orderId]);
  const problem = (status: number, code: string, field: string, detail: string) => ({ status, code, field, detail });

  it('refuses an order id that is not 1 to 128 allowed characters, a number included, saying which characters are allowed', async () => {
    const id = await funded('10');
    const detail = 'orderId must be 1 to 128 characters of A-Z a-z 0-9 . _ : -';
    for (const orderId of [12345, 'has space', 'x'.repeat(129)]) {
      expect((await h.holds('POST', '', { orderId, accountId: id, currency: 'USD', amount: '1' })).body).toEqual(
        expect.objectContaining(problem(400, 'BAD_USER_INPUT', 'orderId', detail)),
      );
    }
    expect(await balanceOf(id)).toEqual({ cash: '10.00', held: '0.00', availableToTrade: '10.00' });
  });

  it('records each hold as an entry naming its order', async () => {
    const id = await funded('10');
    expect((await h.holds('POST', '', { orderId: 'named-1', accountId: id, currency: 'USD', amount: '4' })).status).toBe(201);
    expect(await entriesOf('named-1')).toEqual([{ kind: 'HOLD', description: 'Hold for order named-1' }]);
  });

  it('refuses to reuse an order id for another account or currency: the existing hold is neither handed out nor changed', async () => {
    const [first, second] = [await funded(), await funded()];
    const body = { orderId: 'terms-1', accountId: first, currency: 'USD', amount: '100' };
    expect((await h.holds('POST', '', body)).status).toBe(201);
    const refused = problem(422, 'UNPROCESSABLE', 'orderId', 'This orderId already has a hold with other terms');
    expect((await h.holds('POST', '', { ...body, accountId: second })).body).toEqual(expect.objectContaining(refused));
    expect((await h.holds('POST', '', { ...body, currency: 'EUR' })).body).toEqual(expect.objectContaining(refused));
    expect(await balanceOf(first)).toEqual({ cash: '1000.00', held: '100.00', availableToTrade: '900.00' });
    expect(await balanceOf(second)).toEqual({ cash: '1000.00', held: '0.00', availableToTrade: '1000.00' });
  });

  it("the hold service keeps its own rules for a caller that skipped the route's checks: a bad account id, another user's order id", async () => {
    const service = new HoldsService(h.service.dataSource);
    const id = await funded();
    await expect(service.place('u', { orderId: 'direct-1', accountId: 'not-a-uuid', currency: 'USD', amount: '1' })).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'accountId',
    });
    expect((await service.place('u', { orderId: 'direct-1', accountId: id, currency: 'USD', amount: '5' })).created).toBe(true);
    // Same account, currency and amount, but another user: not this user's hold to see.
    await expect(service.place('someone-else', { orderId: 'direct-1', accountId: id, currency: 'USD', amount: '5' })).rejects.toMatchObject(
      {
        code: 'UNPROCESSABLE',
        field: 'orderId',
        message: 'This orderId already has a hold with other terms',
      },
    );
  });

  it('refuses a capture with a bad description, above the held amount, or of a hold it cannot find, saying why; without a description the trade names its order', async () => {
    const id = await funded('100');
    expect((await h.holds('POST', '', { orderId: 'cap-1', accountId: id, currency: 'USD', amount: '10' })).status).toBe(201);
    const badDescription = problem(
      400,
      'BAD_USER_INPUT',
      'description',
      'description must be 1 to 140 characters without control characters',
    );
    for (const description of ['ring \u0007 the bell', '', 'x'.repeat(141), 42]) {
      expect((await h.holds('POST', '/cap-1/capture', { accountId: id, amount: '5', description })).body).toEqual(
        expect.objectContaining(badDescription),
      );
    }
    expect((await h.holds('POST', '/cap-1/capture', { accountId: id, amount: '10.01' })).body).toEqual(
      expect.objectContaining(problem(422, 'UNPROCESSABLE', 'amount', 'amount exceeds the held 10.00 USD')),
    );
    expect((await h.holds('POST', '/cap-1/capture', { accountId: account, amount: '5' })).body).toEqual(
      expect.objectContaining(problem(404, 'NOT_FOUND', 'orderId', 'Hold not found')),
    );
    expect((await h.holds('POST', '/cap-1/capture', { accountId: id, amount: '4' })).body).toMatchObject({ state: 'CAPTURED' });
    const nodes = (
      await h.gql(ENTITY('cashActivity { nodes { type amount description } }'), { r: [{ __typename: 'Account', id }] }, { sub: 'u' })
    ).body.data._entities[0].cashActivity.nodes;
    expect(nodes[0]).toEqual({ type: 'TRADE', amount: '-4.00', description: 'Trade for order cap-1' });
  });

  it('refuses a replace onto the same order id, with a keep that is not a decimal string, of a hold already released or captured, or onto an order id held with other terms; nothing moves', async () => {
    const [id, otherId] = [await funded(), await funded()];
    const place = (orderId: string, accountId: string, amount: string) =>
      h.holds('POST', '', { orderId, accountId, currency: 'USD', amount });
    const replace = (orderId: string, replacementOrderId: string, amount: string, keep: unknown = '0') =>
      h.holds('POST', `/${orderId}/replace`, { accountId: id, replacementOrderId, keep, amount });
    expect((await place('rp-a', id, '100')).status).toBe(201);

    expect((await replace('rp-a', 'rp-a', '100')).body).toEqual(
      expect.objectContaining(problem(400, 'BAD_USER_INPUT', 'replacementOrderId', 'replacementOrderId must differ')),
    );
    expect((await replace('rp-a', 'rp-b', '100', 0)).body).toMatchObject({ status: 400, code: 'BAD_USER_INPUT', field: 'keep' });

    // Each replacement order id below already has a hold with other terms: another amount, another account, another user.
    expect((await place('rp-taken-amount', id, '50')).status).toBe(201);
    expect((await place('rp-taken-account', otherId, '50')).status).toBe(201);
    await new HoldsService(h.service.dataSource).place('someone-else', {
      orderId: 'rp-taken-user',
      accountId: id,
      currency: 'USD',
      amount: '50',
    });
    const taken = problem(422, 'UNPROCESSABLE', 'replacementOrderId', 'This replacementOrderId already has a hold with other terms');
    expect((await replace('rp-a', 'rp-taken-amount', '60')).body).toEqual(expect.objectContaining(taken));
    expect((await replace('rp-a', 'rp-taken-account', '50')).body).toEqual(expect.objectContaining(taken));
    expect((await replace('rp-a', 'rp-taken-user', '50')).body).toEqual(expect.objectContaining(taken));

    expect((await place('rp-released', id, '5')).status).toBe(201);
    expect((await h.holds('POST', '/rp-released/release', { accountId: id })).status).toBe(200);
    expect((await replace('rp-released', 'rp-c', '5')).body).toEqual(
      expect.objectContaining(problem(409, 'CONFLICT', 'orderId', 'The hold was already released')),
    );
    expect((await place('rp-captured', id, '5')).status).toBe(201);
    expect((await h.holds('POST', '/rp-captured/capture', { accountId: id, amount: '5' })).status).toBe(200);
    expect((await replace('rp-captured', 'rp-d', '5')).body).toEqual(
      expect.objectContaining(problem(409, 'CONFLICT', 'orderId', 'The hold was already captured')),
    );

    expect((await h.holds('GET', `/rp-a?accountId=${id}`)).body).toMatchObject({ state: 'HELD', amount: '100.00' });
    // 100 (rp-a) + 50 + 50 still held; 5 captured.
    expect(await balanceOf(id)).toEqual({ cash: '995.00', held: '200.00', availableToTrade: '795.00' });
  });

  it('reads a keep written as zero ("0", "00", "0.00") as releasing the old hold, and any other keep as what the old hold keeps', async () => {
    const id = await funded('100');
    const replace = (orderId: string, replacementOrderId: string, keep: string, amount: string) =>
      h.holds('POST', `/${orderId}/replace`, { accountId: id, replacementOrderId, keep, amount });
    const state = async (orderId: string) => (await h.holds('GET', `/${orderId}?accountId=${id}`)).body;
    expect((await h.holds('POST', '', { orderId: 'kz-1', accountId: id, currency: 'USD', amount: '100' })).status).toBe(201);
    expect((await replace('kz-1', 'kz-2', '0', '100')).status).toBe(200);
    expect(await state('kz-1')).toMatchObject({ state: 'RELEASED', amount: '100.00' });
    expect((await replace('kz-2', 'kz-3', '00', '100')).status).toBe(200);
    expect(await state('kz-2')).toMatchObject({ state: 'RELEASED', amount: '100.00' });
    expect((await replace('kz-3', 'kz-4', '0.00', '100')).status).toBe(200);
    expect(await state('kz-3')).toMatchObject({ state: 'RELEASED', amount: '100.00' });
    expect((await replace('kz-4', 'kz-5', '0.50', '50')).status).toBe(200);
    expect(await state('kz-4')).toMatchObject({ state: 'HELD', amount: '0.50' });
    expect(await balanceOf(id)).toEqual({ cash: '100.00', held: '50.50', availableToTrade: '49.50' });
  });

  it('books a replace as the part freed from the old hold and the new hold, each naming both orders; keeping the whole old hold frees nothing', async () => {
    const id = await funded();
    const replace = (orderId: string, replacementOrderId: string, keep: string, amount: string) =>
      h.holds('POST', `/${orderId}/replace`, { accountId: id, replacementOrderId, keep, amount });
    expect((await h.holds('POST', '', { orderId: 'rb-1', accountId: id, currency: 'USD', amount: '100' })).status).toBe(201);
    expect((await replace('rb-1', 'rb-2', '40', '70')).status).toBe(200);
    expect(await entriesOf('rb-1')).toEqual([
      { kind: 'HOLD', description: 'Hold for order rb-1' },
      { kind: 'HOLD_RELEASE', description: 'Hold reduced for order rb-1, replaced by rb-2' },
    ]);
    expect(await entriesOf('rb-2')).toEqual([{ kind: 'HOLD', description: 'Hold for order rb-2 (replaces rb-1)' }]);
    expect((await replace('rb-2', 'rb-3', '70', '10')).status).toBe(200);
    expect(await entriesOf('rb-2')).toEqual([{ kind: 'HOLD', description: 'Hold for order rb-2 (replaces rb-1)' }]);
    expect(await balanceOf(id)).toEqual({ cash: '1000.00', held: '120.00', availableToTrade: '880.00' });
    // 880 free + the 10 rb-3 gives back is not 900.
    expect((await replace('rb-3', 'rb-4', '0', '900')).body).toEqual(
      expect.objectContaining(
        problem(
          422,
          'UNPROCESSABLE',
          'amount',
          'Insufficient funds: 890.00 USD available to trade, with what the replaced order gives back',
        ),
      ),
    );
  });

  it('never lets a replace give back what fills of the old order already spent: keep cannot go below it', async () => {
    const ds = h.service.dataSource;
    const id = await funded();
    expect((await h.holds('POST', '', { orderId: 'rs-1', accountId: id, currency: 'USD', amount: '100' })).status).toBe(201);
    const fills = new SettlementService(ds, new SaleSettlements(ds, 1));
    await fills.apply({
      eventId: randomUUID(),
      entryId: '0-1',
      type: 'trade.executed',
      payload: {
        trade: {
          id: randomUUID(),
          orderId: 'rs-1',
          accountId: id,
          symbol: 'AAPL',
          side: 'BUY',
          quantity: '1',
          price: '30',
          currency: 'USD',
          grossAmount: '30',
          commission: '1',
          executedAt: new Date().toISOString(),
        },
      },
    });
    const replace = (keep: string) => h.holds('POST', '/rs-1/replace', { accountId: id, replacementOrderId: 'rs-2', keep, amount: '10' });
    expect((await replace('30.99')).body).toMatchObject({
      status: 422,
      code: 'UNPROCESSABLE',
      field: 'keep',
      detail: expect.stringMatching(/^keep must lie between what settled and the held 100(\.0+)?$/),
    });
    expect((await replace('31')).body).toMatchObject({ orderId: 'rs-2', state: 'HELD', amount: '10.00' });
    expect((await h.holds('GET', `/rs-1?accountId=${id}`)).body).toMatchObject({ state: 'HELD', amount: '31.00' });
  });

  it('lets only one of several replaces of the same order at once through; the others find it already released, and its cash is freed once', async () => {
    const ds = h.service.dataSource;
    const id = await funded('100');
    expect((await h.holds('POST', '', { orderId: 'rr-0', accountId: id, currency: 'USD', amount: '100' })).status).toBe(201);
    // Another booking on the account is in progress, so the five replaces all arrive before any can finish.
    const booking = ds.createQueryRunner();
    await booking.startTransaction();
    let answers: Array<{ status: number; body: any }>;
    try {
      await lockAccountCurrency(booking.manager, id, 'USD');
      const pending = Promise.all(
        [1, 2, 3, 4, 5].map((i) =>
          h.holds('POST', '/rr-0/replace', { accountId: id, replacementOrderId: `rr-${i}`, keep: '0', amount: '100' }),
        ),
      );
      await eventually(
        () => ds.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`),
        (rows: Array<{ n: number }>) => rows[0]!.n >= 5,
      );
      await booking.commitTransaction();
      answers = await pending;
    } finally {
      if (booking.isTransactionActive) await booking.rollbackTransaction();
      await booking.release();
    }
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409, 409]);
    expect(await balanceOf(id)).toEqual({ cash: '100.00', held: '100.00', availableToTrade: '0.00' });
    expect(await h.ledgerInvariants()).toEqual({ unbalancedEntries: 0, total: '0.00000000', unbalancedAccounts: 0, driftedTotals: 0 });
  });

  it('answers a read of a hold at once, even while a change to that hold is in progress', async () => {
    const id = await funded('10');
    expect((await h.holds('POST', '', { orderId: 'busy-1', accountId: id, currency: 'USD', amount: '1' })).status).toBe(201);
    const runner = h.service.dataSource.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(`SELECT order_id FROM holds WHERE order_id = 'busy-1' FOR UPDATE`);
      const read = h.holds('GET', `/busy-1?accountId=${id}`).then((r) => r.body);
      const waited = new Promise((r) => setTimeout(() => r('still waiting'), 5000).unref());
      expect(await Promise.race([read, waited])).toMatchObject({ orderId: 'busy-1', state: 'HELD' });
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });
});
