import { BACK_OFFICE_SUBJECT, INTERNAL_BACK_OFFICE_SCOPE, INTERNAL_CLAIMS_HEADER } from '@trading/auth';
import { http } from '@trading/testing';
import { admin } from '../support/oauth-helpers';
import { fund, startOrdersPlatform, until } from '../support/orders-platform';
import { newUser, sessionToken } from '../support/pat-helpers';
import { adminCli } from '../support/admin-cli';
import { inDays, type TestPlatform } from '../support/test-platform';

/** The service team opens and closes accounts and runs instruments, through the admin API and CLI. */
describe('back office: accounts and instruments', () => {
  let p: TestPlatform;
  const cli = (...args: string[]) => adminCli(p, args);
  const api = (path: string) => p.urls.api + path;
  /** A new user with a READ_WRITE PAT session, as `users create` + `pat create` + POST /pat/login make it. */
  const customer = async () => {
    const user = await newUser(p);
    const pat = await admin(p, 'POST', '/pats', { email: user.email, name: 'script', scope: 'READ_WRITE', expires: inDays(5) });
    return { ...user, session: await sessionToken(p.urls.api, pat.body.token) };
  };

  beforeAll(async () => {
    p = await startOrdersPlatform();
  }, 60_000);
  afterAll(() => p?.stop());

  it('opens an account for a new user that every endpoint serves at once: deposit, order, position', async () => {
    const user = await customer();
    expect((await http('GET', api('/accounts'), { token: user.session })).body.accounts).toEqual([]);

    const opened = await cli('accounts', 'open', '--email', user.email, '--type', 'CASH', '--currency', 'usd', '--json');
    expect(opened.code).toBe(0);
    const account = JSON.parse(opened.stdout);
    expect(account).toMatchObject({
      accountId: expect.any(String),
      number: expect.stringMatching(/^TA\d{8}$/),
      type: 'CASH',
      status: 'ACTIVE',
      baseCurrency: 'USD',
      email: user.email,
    });
    const human = await cli('accounts', 'list', '--email', user.email);
    expect(human.stdout).toContain(`${account.number}  CASH    USD  ACTIVE`);

    const listed = await http('GET', api('/accounts'), { token: user.session });
    expect(listed.body.accounts).toEqual([
      expect.objectContaining({ id: account.accountId, number: account.number, type: 'CASH', status: 'ACTIVE', baseCurrency: 'USD' }),
    ]);
    await fund(p, user.session, account.accountId, '1000.00');
    await p.oms.feed.setPrice('AAPL', '190.00');
    const order = await http('POST', api('/oms/order'), {
      token: user.session,
      body: { accountId: account.accountId, symbol: 'AAPL', side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '2' },
    });
    expect(order.status).toBe(201);
    await until(
      () => http('GET', api(`/accounts/${account.accountId}/position?symbol=AAPL`), { token: user.session }),
      (r) => r.status === 200 && r.body.quantity === '2',
      'the position',
    );
  }, 60_000);

  it('refuses bad input by field, and an unknown user', async () => {
    const user = await customer();
    const open = (body: Record<string, unknown>) =>
      admin(p, 'POST', '/accounts', { email: user.email, type: 'CASH', currency: 'USD', ...body });
    expect(await open({ type: 'SAVINGS' })).toMatchObject({ status: 400, body: { field: 'type' } });
    expect(await open({ currency: 'XYZ' })).toMatchObject({ status: 400, body: { field: 'currency' } });
    expect(await open({ email: 'nobody@example.com' })).toMatchObject({ status: 404, body: { field: 'email' } });
    const cliMissing = await cli('accounts', 'open', '--email', user.email, '--type', 'CASH');
    expect([cliMissing.code, cliMissing.stderr]).toEqual([2, expect.stringContaining('missing --currency')]);
    expect((await admin(p, 'GET', `/accounts?email=${encodeURIComponent(user.email)}`)).body.accounts).toEqual([]);
  });

  it('closes an account only when nothing remains, naming every reason, and restores it otherwise', async () => {
    const user = await customer();
    const { body: account } = await admin(p, 'POST', '/accounts', { email: user.email, type: 'MARGIN', currency: 'USD' });
    await fund(p, user.session, account.accountId, '500.00');
    await p.oms.feed.setPrice('AAPL', '190.00');
    const resting = await http('POST', api('/oms/order'), {
      token: user.session,
      body: {
        accountId: account.accountId,
        symbol: 'AAPL',
        side: 'BUY',
        type: 'LIMIT',
        timeInForce: 'GTC',
        quantity: '1',
        limitPrice: '100.00',
      },
    });
    expect(resting.status).toBe(201);

    const refused = await cli('accounts', 'close', '--account', account.accountId);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('cannot be closed');
    const again = await admin(p, 'POST', `/accounts/${account.accountId}/close`);
    expect(again).toMatchObject({
      status: 409,
      body: { code: 'CONFLICT', reasons: ['1 open order(s): cancel them first', 'cash remains: 500.00 USD (100.05 held for open orders)'] },
    });
    // Still the user's to use: the attempt put it back as it was.
    expect((await http('GET', api('/accounts'), { token: user.session })).body.accounts).toEqual([
      expect.objectContaining({ id: account.accountId, status: 'ACTIVE' }),
    ]);

    // An empty account closes, once; a closed account moves no money.
    const { body: empty } = await admin(p, 'POST', '/accounts', { email: user.email, type: 'CASH', currency: 'EUR' });
    const closed = await cli('accounts', 'close', '--account', empty.accountId, '--json');
    expect(JSON.parse(closed.stdout)).toMatchObject({ accountId: empty.accountId, status: 'CLOSED' });
    expect(await admin(p, 'POST', `/accounts/${empty.accountId}/close`)).toMatchObject({
      status: 409,
      body: { detail: expect.stringContaining('already closed') },
    });
    const deposit = await http('POST', api('/banking/deposit'), {
      token: user.session,
      body: { accountId: empty.accountId, amount: '10.00', currency: 'EUR' },
    });
    expect(deposit).toMatchObject({ status: 422, body: { field: 'accountId' } });
    expect(await admin(p, 'POST', '/accounts/not-an-id/close')).toMatchObject({ status: 400, body: { field: 'accountId' } });
  }, 60_000);

  it('lists, adds, halts and resumes instruments: a halted one refuses new orders and its working orders do not fill', async () => {
    const user = await customer();
    const { body: account } = await admin(p, 'POST', '/accounts', { email: user.email, type: 'CASH', currency: 'USD' });
    await fund(p, user.session, account.accountId, '1000.00');

    const added = await cli(
      'instruments',
      'add',
      '--symbol',
      'ACME',
      '--name',
      'Acme Corp',
      '--currency',
      'USD',
      '--tick',
      '0.01',
      '--lot',
      '1',
      '--price',
      '50.00',
      '--json',
    );
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({
      symbol: 'ACME',
      currency: 'USD',
      tickSize: '0.01',
      lastPrice: '50.00',
      previousClose: '50.00',
      tradable: true,
    });
    expect(
      await admin(p, 'POST', '/instruments', { symbol: 'ACME', name: 'Again', currency: 'USD', tickSize: '0.01', price: '50.00' }),
    ).toMatchObject({ status: 409, body: { field: 'symbol' } });
    expect(
      await admin(p, 'POST', '/instruments', { symbol: 'OFFTICK', name: 'Off', currency: 'USD', tickSize: '0.05', price: '50.01' }),
    ).toMatchObject({ status: 400, body: { field: 'price' } });
    expect(
      await admin(p, 'POST', '/instruments', { symbol: 'bad symbol', name: 'Bad', currency: 'USD', tickSize: '0.01', price: '1' }),
    ).toMatchObject({ status: 400, body: { field: 'symbol' } });
    expect((await cli('instruments', 'list')).stdout).toMatch(/ACME\s+Acme Corp\s+USD\s+tick 0\.01\s+lot 1\s+last 50\.00\s+trading/);

    const place = (body: Record<string, unknown>) =>
      http('POST', api('/oms/order'), {
        token: user.session,
        body: { accountId: account.accountId, symbol: 'ACME', side: 'BUY', timeInForce: 'GTC', quantity: '1', ...body },
      });
    const working = await place({ type: 'LIMIT', limitPrice: '49.00' });
    expect(working).toMatchObject({ status: 201, body: { status: 'NEW' } });

    expect((await cli('instruments', 'halt', '--symbol', 'ACME')).stdout).toContain('ACME is halted');
    expect(await place({ type: 'MARKET', timeInForce: 'DAY' })).toMatchObject({
      status: 422,
      body: { field: 'symbol', detail: expect.stringContaining('halted') },
    });
    // The price crosses the working order's limit while halted: several engine passes, no fill.
    await p.oms.feed.setPrice('ACME', '48.00');
    await new Promise((r) => setTimeout(r, 500));
    const order = (await http('GET', api(`/oms/${account.accountId}/order/${working.body.id}`), { token: user.session })).body;
    expect(order).toMatchObject({ status: 'NEW', filledQuantity: '0' });

    expect((await cli('instruments', 'resume', '--symbol', 'ACME')).stdout).toContain('ACME is trading');
    await until(
      () => http('GET', api(`/oms/${account.accountId}/order/${working.body.id}`), { token: user.session }),
      (r) => r.body.status === 'FILLED',
      'the fill after resuming',
    );
    expect(await admin(p, 'POST', '/instruments/NOPE/halt')).toMatchObject({ status: 404, body: { field: 'symbol' } });
  }, 60_000);

  it("attack: the back-office APIs answer only auth's own identity, never an edge or a user token", async () => {
    const user = await customer();
    const body = { userId: user.id, type: 'CASH', currency: 'USD' };
    const call = (header?: string) =>
      http('POST', `${p.internalUrls.accounts}/internal/back-office/accounts`, {
        body,
        headers: header ? { [INTERNAL_CLAIMS_HEADER]: header } : {},
      });
    const asService = (service: 'gateway' | 'rest-facade' | 'oms' | 'banking') =>
      p
        .signerFor(service)
        .sign({ sub: BACK_OFFICE_SUBJECT, sid: BACK_OFFICE_SUBJECT, kind: 'pat', scope: [INTERNAL_BACK_OFFICE_SCOPE] }, 'accounts');
    expect((await call()).status).toBe(401);
    // No other service may claim the back-office scope here, not even the gateway.
    for (const service of ['gateway', 'oms', 'banking'] as const) expect((await call(await asService(service))).status).toBe(401);
    // A user's own claims, passed on by the gateway, are no admin's.
    const userClaims = await p
      .signerFor('gateway')
      .sign({ sub: user.id, sid: 's', kind: 'pat', scope: ['read:accounts', 'write:accounts'] }, 'accounts');
    expect((await call(userClaims)).status).toBe(403);
    // The admin API wants its credential.
    expect(
      (
        await http('POST', `${p.urls.adminApi}/admin/accounts`, {
          body: { email: user.email, type: 'CASH', currency: 'USD' },
          token: 'not-the-admin-credential-at-all',
        })
      ).status,
    ).toBe(401);
    expect((await admin(p, 'GET', `/accounts?email=${encodeURIComponent(user.email)}`)).body.accounts).toEqual([]);
  });
});
