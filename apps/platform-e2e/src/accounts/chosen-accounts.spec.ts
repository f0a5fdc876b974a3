import { SCOPES } from '@trading/auth';
import { http, tickedAccounts } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { admin, exchange, loginPath, pkce, provisionApp, refresh, UserAgent } from '../support/oauth-helpers';
import { DashboardClient, newUser, sessionToken } from '../support/pat-helpers';
import { EventStreamReader } from '../support/server-sent-events';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0]];
/** Alice's cash account (given to the limited tokens) and her margin account (not given). */
const given = DEMO_ACCOUNTS[0]!.id;
const withheld = DEMO_ACCOUNTS[1]!.id;
const bobsAccount = DEMO_ACCOUNTS[2]!.id;

/** A PAT of alice's, logged in; `accountIds`: the accounts it is limited to (none: all of hers). */
async function aliceToken(p: TestPlatform, access: 'READ_ONLY' | 'READ_WRITE', accountIds?: string[]): Promise<string> {
  const user = (await p.auth.users.findByEmail(alice.email))!;
  const { token } = await p.auth.pats.create({ userId: user.id, name: `chosen ${access}`, access, expires: inDays(7), accountIds });
  const res = await http('POST', `${p.urls.api}/pat/login`, { body: { token } });
  if (res.status !== 200) throw new Error(`PAT login answered ${res.status}`);
  return res.body.token as string;
}

const refusal = (res: { status: number; body: any }) => ({ status: res.status, code: res.body?.code, field: res.body?.field });
const FORBIDDEN_ACCOUNT = { status: 403, code: 'FORBIDDEN', field: 'accountId' };

/**
 * A user may give a token or an app some of their accounts only. Every service refuses the
 * others, whichever way they are asked for: the REST facade, the gateway, a representation sent
 * straight to a subgraph (`_entities`), and the order event stream.
 */
describe('tokens limited to chosen accounts', () => {
  let p: TestPlatform;
  let limited: string;
  let limitedWriter: string;
  let full: string;

  beforeAll(async () => {
    p = await startTestPlatform();
    limited = await aliceToken(p, 'READ_ONLY', [given]);
    limitedWriter = await aliceToken(p, 'READ_WRITE', [given]);
    full = await aliceToken(p, 'READ_ONLY');
  }, 120_000);
  afterAll(() => p?.stop());

  const get = (path: string, token: string) => http('GET', `${p.urls.api}${path}`, { token });
  const graphql = (query: string, token: string) => http('POST', p.urls.gateway, { token, body: { query } });

  it('REST: the account list holds the given account only, and every read of the other is 403 naming accountId', async () => {
    expect((await get('/accounts', limited)).body.accounts.map((a: { id: string }) => a.id)).toEqual([given]);
    expect((await get('/accounts', full)).body.accounts.map((a: { id: string }) => a.id).sort()).toEqual([given, withheld].sort());
    for (const path of [
      `/accounts/${withheld}`,
      `/accounts/${withheld}/positions`,
      `/accounts/${withheld}/portfolios`,
      `/accounts/${withheld}/activities`,
      `/banking/${withheld}/balance`,
      `/banking/${withheld}/activity`,
      `/oms/${withheld}/orders`,
      `/oms/${withheld}/trades`,
    ]) {
      expect({ path, ...refusal(await get(path, limited)) }).toEqual({ path, ...FORBIDDEN_ACCOUNT });
      // The same reads of the given account, and of the other with a token for all accounts, are answered.
      expect({ path, status: (await get(path, full)).status }).toEqual({ path, status: 200 });
      const same = path.replace(withheld, given);
      expect({ same, status: (await get(same, limited)).status }).toEqual({ same, status: 200 });
    }
    // Someone else's account stays "not found", as for any token: nothing says whose it is.
    expect((await get(`/accounts/${bobsAccount}`, limited)).status).toBe(404);
  });

  it('REST: orders and funding in the account not given are 403 before anything is held or placed', async () => {
    const order = await http('POST', `${p.urls.api}/oms/order`, {
      token: limitedWriter,
      body: { accountId: withheld, symbol: 'AAPL', side: 'BUY', type: 'LIMIT', timeInForce: 'DAY', quantity: '1', limitPrice: '1.00' },
    });
    expect(refusal(order)).toEqual(FORBIDDEN_ACCOUNT);
    const deposit = await http('POST', `${p.urls.api}/banking/deposit`, {
      token: limitedWriter,
      body: { accountId: withheld, amount: '10.00', currency: 'USD' },
    });
    expect(refusal(deposit)).toEqual(FORBIDDEN_ACCOUNT);
    const ordersNow = await get(`/oms/${withheld}/orders`, full);
    expect(ordersNow.body.orders ?? ordersNow.body.nodes ?? []).toEqual([]);
  });

  it('GraphQL through the gateway: accounts lists the given one, account(id) of the other is FORBIDDEN', async () => {
    const list = await graphql('{ accounts { id } }', limited);
    expect(list.body.data.accounts).toEqual([{ id: given }]);
    const other = await graphql(`{ account(id: "${withheld}") { id balances { cash } orders { nodes { id } } } }`, limited);
    expect(other.body.data?.account ?? null).toBeNull();
    expect(other.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', field: 'accountId' });
    const mine = await graphql(`{ account(id: "${given}") { id balances { cash } } }`, limited);
    expect(mine.body.errors).toBeUndefined();
    expect(mine.body.data.account.id).toBe(given);
  });

  it('_entities: a representation of the account not given, sent to banking, the OMS or accounts as the gateway would, resolves to null', async () => {
    const user = (await p.auth.users.findByEmail(alice.email))!;
    const claims = {
      sub: user.id,
      sid: 'limited',
      kind: 'pat' as const,
      patId: 'tpat_x',
      access: 'READ_ONLY' as const,
      scope: [...SCOPES],
    };
    const asks: Array<[keyof TestPlatform['internalUrls'], string]> = [
      ['banking', 'balances { cash }'],
      ['oms', 'orders { nodes { id } }'],
      ['accounts', 'id'],
    ];
    for (const [service, fields] of asks) {
      const query = `query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { ${fields} } } }`;
      const ask = async (accounts?: string[]) => {
        const header = await p.signerFor('gateway').sign({ ...claims, ...(accounts ? { accounts } : {}) }, service);
        return http('POST', `${p.internalUrls[service]}/graphql`, {
          body: { query, variables: { r: [{ __typename: 'Account', id: withheld }] } },
          headers: { 'x-internal-claims': header },
        });
      };
      // The same claims for every account resolve it (so the check is what refuses below), and leave
      // the user's accounts remembered by the service: the limited claims must not be answered from that.
      expect({ service, resolved: (await ask()).body.data._entities[0] !== null }).toEqual({ service, resolved: true });
      expect({ service, entities: (await ask([given])).body.data._entities }).toEqual({ service, entities: [null] });
    }
  });

  it('the order event stream of the account not given is 403 naming accountId; of the given one it opens', async () => {
    const refused = await EventStreamReader.open(`${p.urls.api}/oms/${withheld}/events`, limited);
    expect({ status: refused.status, ...JSON.parse(refused.body!) }).toMatchObject(FORBIDDEN_ACCOUNT);
    const opened = await EventStreamReader.open(`${p.urls.api}/oms/${given}/events`, limited);
    expect(opened.status).toBe(200);
    opened.close();
  });

  it("a PAT cannot be limited to someone else's account, or to something that is not an account id", async () => {
    const user = (await p.auth.users.findByEmail(alice.email))!;
    const create = (accountIds: unknown) =>
      p.auth.pats.create({ userId: user.id, name: 'bad', access: 'READ_ONLY', expires: inDays(7), accountIds });
    await expect(create([bobsAccount])).rejects.toMatchObject({ code: 'UNPROCESSABLE', field: 'accounts' });
    await expect(create(['not-an-id'])).rejects.toMatchObject({ code: 'BAD_USER_INPUT', field: 'accounts' });
  });

  it('the dashboard form makes a token limited to the ticked accounts, and its list shows them', async () => {
    const dashboard = new DashboardClient(p.urls.login);
    await dashboard.signIn(alice.email, alice.password);
    const page = await dashboard.request('GET', '/en/developer');
    expect([...page.body.matchAll(/id="token-account-([0-9a-f-]+)"/g)].map((m) => m[1]).sort()).toEqual([given, withheld].sort());
    const created = await dashboard.createToken({ name: 'cash only', accounts: [given] });
    expect(created.status).toBe(303);
    const token = await sessionToken(p.urls.api, created.token!);
    expect((await get('/accounts', token)).body.accounts.map((a: { id: string }) => a.id)).toEqual([given]);
    expect(refusal(await get(`/banking/${withheld}/balance`, token))).toEqual(FORBIDDEN_ACCOUNT);
    const row = new RegExp(`<tr data-token-id="${created.token!.split('.')[0]}">[\\s\\S]*?</tr>`).exec(created.body)![0];
    expect(row).toContain(`data-account="${given}">CASH DU1000001 (USD)`);
    expect(row).not.toContain(withheld);
    // Someone else's account, posted into the form, is refused with the field named.
    const refused = await dashboard.createToken({ name: 'not mine', accounts: [bobsAccount] });
    expect([refused.status, Object.keys(refused.errors)]).toEqual([422, ['accounts']]);
  });

  it('an account opened later is not reached by a limited token, and is by one for every account', async () => {
    const opened = await admin(p, 'POST', '/accounts', { email: alice.email, type: 'CASH', currency: 'EUR' });
    expect(opened.status).toBe(201);
    const later = opened.body.accountId as string;
    expect(refusal(await get(`/accounts/${later}`, limited))).toEqual(FORBIDDEN_ACCOUNT);
    expect((await get('/accounts', limited)).body.accounts.map((a: { id: string }) => a.id)).toEqual([given]);
    expect((await get(`/accounts/${later}`, full)).status).toBe(200);
  });
});

describe('an app limited to the accounts ticked on the consent page', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform();
  }, 120_000);
  afterAll(() => p?.stop());

  it('the consent page offers every account ticked; the app sees the ones left ticked, and the dashboard narrows or widens the set for its next token', async () => {
    const app = await provisionApp(p);
    const ua = new UserAgent(p.urls.login);
    const { verifier, challenge } = pkce();
    const page = await ua.open(
      loginPath({ clientId: app.clientId, redirectUri: app.redirectUri, scopes: 'read:accounts', state: 's', challenge, method: 'S256' }),
      alice,
    );
    const offered = tickedAccounts(page.body);
    expect(offered.sort()).toEqual([given, withheld].sort());
    // Nothing ticked is asked again, with a reason; an id the page did not offer (bob's) counts as nothing.
    const none = await ua.answer(page, 'approve', 'en', [bobsAccount]);
    expect(none.status).toBe(400);
    expect(none.body).toContain('id="consent-accounts-error"');
    const answer = await ua.answer(none, 'approve', 'en', [given]);
    const code = new URL(answer.location!).searchParams.get('code')!;
    const tokens = (await exchange(p, app, { code, verifier, redirectUri: app.redirectUri })).body;
    const get = (path: string, token: string) => http('GET', `${p.urls.api}${path}`, { token });
    expect((await get('/accounts', tokens.access_token)).body.accounts.map((a: { id: string }) => a.id)).toEqual([given]);
    expect(refusal(await get(`/accounts/${withheld}/positions`, tokens.access_token))).toEqual(FORBIDDEN_ACCOUNT);

    // The connected-apps page: the app now reaches the margin account only.
    const dashboard = await ua.request('GET', '/en/developer');
    const grantId = /action="\/en\/developer\/apps\/([0-9a-f-]+)\/accounts"/.exec(dashboard.body)![1]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(dashboard.body)![1]!;
    const saved = await ua.request('POST', `/en/developer/apps/${grantId}/accounts`, { _csrf: csrf, accounts: [withheld] });
    expect(saved.status).toBe(303);
    // The token that named the old set ends at once; the next refresh names the new one.
    expect((await get('/accounts', tokens.access_token)).status).toBe(401);
    const next = await refresh(p.urls.api, app, tokens.refresh_token);
    expect(next.status).toBe(200);
    expect((await get('/accounts', next.body.access_token)).body.accounts.map((a: { id: string }) => a.id)).toEqual([withheld]);
    expect(refusal(await get(`/accounts/${given}`, next.body.access_token))).toEqual(FORBIDDEN_ACCOUNT);
    // The page shows the set.
    const after = await ua.request('GET', '/en/developer');
    expect(after.body).toContain('now reaches only the accounts you ticked');
    expect(after.body).toMatch(new RegExp(`class="app-accounts"><span data-account="${withheld}">`));

    // Nothing ticked changes nothing and says why; someone else's account, or another user's grant, is refused.
    const csrfNow = /name="_csrf" value="([^"]+)"/.exec(after.body)![1]!;
    expect((await ua.request('POST', `/en/developer/apps/${grantId}/accounts`, { _csrf: csrfNow })).status).toBe(303);
    expect((await ua.request('GET', '/en/developer')).body).toContain('Tick at least one account, or revoke the app instead.');
    expect((await get('/accounts', next.body.access_token)).status).toBe(200);
    const notMine = await ua.request('POST', `/en/developer/apps/${grantId}/accounts`, { _csrf: csrfNow, accounts: [bobsAccount] });
    expect(notMine.status).toBe(422);
    const bob = new UserAgent(p.urls.login);
    await bob.open('/en/developer', { email: DEMO_USERS[1]!.email, password: DEMO_USERS[1]!.password });
    const bobCsrf = /name="_csrf" value="([^"]+)"/.exec((await bob.request('GET', '/en/developer')).body)![1]!;
    const othersGrant = await bob.request('POST', `/en/developer/apps/${grantId}/accounts`, { _csrf: bobCsrf, accounts: [bobsAccount] });
    expect(othersGrant.status).toBe(404);
    expect((await get('/accounts', next.body.access_token)).body.accounts.map((a: { id: string }) => a.id)).toEqual([withheld]);
  });

  it('a user with no account yet approves without a choice; an account opened afterwards is not reached until added', async () => {
    const user = await newUser(p);
    const app = await provisionApp(p);
    const ua = new UserAgent(p.urls.login);
    const { verifier, challenge } = pkce();
    const page = await ua.open(
      loginPath({ clientId: app.clientId, redirectUri: app.redirectUri, scopes: 'read:accounts', state: 's', challenge, method: 'S256' }),
      user,
    );
    expect(page.body).not.toContain('id="consent-accounts"');
    const answer = await ua.answer(page, 'approve');
    const code = new URL(answer.location!).searchParams.get('code')!;
    const token = (await exchange(p, app, { code, verifier, redirectUri: app.redirectUri })).body.access_token as string;
    const opened = await admin(p, 'POST', '/accounts', { email: user.email, type: 'CASH', currency: 'USD' });
    expect(opened.status).toBe(201);
    const get = (path: string) => http('GET', `${p.urls.api}${path}`, { token });
    expect((await get('/accounts')).body.accounts).toEqual([]);
    expect(refusal(await get(`/accounts/${opened.body.accountId}`))).toEqual(FORBIDDEN_ACCOUNT);
  });
});
