import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Supergraph } from '@apollo/federation-internals';
import { SCOPES, type Scope } from '@trading/auth';
import { statusForCode } from '@trading/errors';
import { AUTHENTICATED_AUTH_ROUTES, ROUTES } from '@trading/rest-facade-service';
import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { provisionApp, tokensFor } from '../support/oauth-helpers';
import { startOrdersPlatform } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

const [alice, bob] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[0]];
const cash = DEMO_ACCOUNTS[0]!.id; // Alice's: USD, no positions
const margin = DEMO_ACCOUNTS[1]!.id; // Alice's: holds AAPL

/** What a call ends in: allowed, `null` (another user's resource is not there), or `<status> <code>`. */
type Outcome = 'ok' | 'null' | '401 UNAUTHENTICATED' | '403 INSUFFICIENT_SCOPE' | '403 READ_ONLY_TOKEN' | '404 NOT_FOUND';

/** Things a call acts on, made fresh by Alice's READ_WRITE PAT so that an allowed call succeeds. */
interface Fixtures {
  restingOrder(): Promise<string>;
  /** A resting order's clientOrderId. */
  restingClientOrderId(): Promise<string>;
  pendingDeposit(): Promise<string>;
}

interface Row {
  /** The single scopes with which a vendor token is allowed; any other single scope is refused INSUFFICIENT_SCOPE. */
  scopes: readonly Scope[];
  /** A READ_ONLY PAT: allowed, or refused by the method rule (it may only read). */
  readOnly: 'ok' | 'refused';
  /** Another user's READ_WRITE PAT, aimed at Alice's account, order or transfer. */
  otherUser: 'ok' | 'null' | '404 NOT_FOUND';
}

interface FieldRow extends Row {
  /** The operation, selecting nothing that needs a scope of its own. */
  operation(f: Fixtures): Promise<string> | string;
}

interface RouteRow extends Row {
  request(f: Fixtures): Promise<{ path: string; body?: unknown }> | { path: string; body?: unknown };
}

const read = (scope: Scope): Pick<Row, 'scopes' | 'readOnly'> => ({ scopes: [scope], readOnly: 'ok' });
const write = (scope: Scope): Pick<Row, 'scopes' | 'readOnly'> => ({ scopes: [scope], readOnly: 'refused' });
const buy = (limitPrice = '100.00') => ({
  accountId: cash,
  symbol: 'AAPL',
  side: 'BUY',
  type: 'LIMIT',
  timeInForce: 'GTC',
  quantity: '1',
  limitPrice,
});
const gqlOrder = (limitPrice = '100.00') =>
  `{ accountId: "${cash}", symbol: "AAPL", side: "BUY", type: "LIMIT", timeInForce: "GTC", quantity: "1", limitPrice: "${limitPrice}" }`;
const funding = `{ accountId: "${cash}", amount: "1.00", currency: "USD" }`;

/** Every GraphQL root field of the supergraph. A field without a row here fails the test. */
const FIELDS: Record<string, FieldRow> = {
  'Query.accounts': { ...read('read:accounts'), otherUser: 'ok', operation: () => '{ accounts { id } }' },
  // Looking up one's own account starts every domain's reads, so any of the three read scopes may.
  'Query.account': {
    scopes: ['read:accounts', 'read:banking', 'read:orders'],
    readOnly: 'ok',
    otherUser: 'null',
    operation: () => `{ account(id: "${cash}") { id } }`,
  },
  'Query.instruments': { ...read('read:orders'), otherUser: 'ok', operation: () => '{ instruments { symbol } }' },
  'Query.marketQuotes': { ...read('read:market'), otherUser: 'ok', operation: () => '{ marketQuotes(symbols: ["AAPL"]) { symbol } }' },
  'Query.marketBars': {
    ...read('read:market'),
    otherUser: 'ok',
    operation: () => '{ marketBars(symbol: "AAPL", timeframe: "1Day") { symbol } }',
  },
  'Query.marketBarSets': {
    ...read('read:market'),
    otherUser: 'ok',
    operation: () => '{ marketBarSets(symbols: ["AAPL"], timeframe: "1Week") { timeframe } }',
  },
  'Query.marketClock': { ...read('read:market'), otherUser: 'ok', operation: () => '{ marketClock { __typename } }' },
  'Query.marketCalendar': { ...read('read:market'), otherUser: 'ok', operation: () => '{ marketCalendar { __typename } }' },
  'Query.marketInstruments': { ...read('read:market'), otherUser: 'ok', operation: () => '{ marketInstruments { symbol } }' },
  'Query.marketInstrument': { ...read('read:market'), otherUser: 'ok', operation: () => '{ marketInstrument(symbol: "AAPL") { symbol } }' },
  'Mutation.updateAccountSettings': {
    ...write('write:accounts'),
    otherUser: '404 NOT_FOUND',
    operation: () => `mutation { updateAccountSettings(accountId: "${cash}", input: { nickname: "authz" }) { accountId } }`,
  },
  'Mutation.deposit': {
    ...write('write:banking'),
    otherUser: '404 NOT_FOUND',
    operation: () => `mutation { deposit(input: ${funding}) { id } }`,
  },
  'Mutation.withdraw': {
    ...write('write:banking'),
    otherUser: '404 NOT_FOUND',
    operation: () => `mutation { withdraw(input: ${funding}) { id } }`,
  },
  'Mutation.cancelFundingTransaction': {
    ...write('write:banking'),
    otherUser: '404 NOT_FOUND',
    operation: async (f) => `mutation { cancelFundingTransaction(transactionId: "${await f.pendingDeposit()}") { id } }`,
  },
  // A preview is a read (read:orders) shaped as a mutation, so a READ_ONLY PAT is refused it like any mutation.
  'Mutation.whatIfOrder': {
    ...write('read:orders'),
    otherUser: '404 NOT_FOUND',
    operation: () => `mutation { whatIfOrder(input: ${gqlOrder()}) { wouldBeRejected } }`,
  },
  'Mutation.placeOrder': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    operation: () => `mutation { placeOrder(input: ${gqlOrder()}) { id } }`,
  },
  'Mutation.cancelOrder': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    operation: async (f) => `mutation { cancelOrder(orderId: "${await f.restingOrder()}") { id } }`,
  },
  'Mutation.cancelOrderByClientOrderId': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    operation: async (f) =>
      `mutation { cancelOrderByClientOrderId(accountId: "${cash}", clientOrderId: "${await f.restingClientOrderId()}") { id } }`,
  },
  'Mutation.replaceOrder': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    operation: async (f) =>
      `mutation { replaceOrder(input: { accountId: "${cash}", orderId: "${await f.restingOrder()}", limitPrice: "101.00" }) { id } }`,
  },
  'Mutation.closePosition': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    operation: () => `mutation { closePosition(input: { accountId: "${margin}", symbol: "AAPL", quantity: "1" }) { id } }`,
  },
  'Mutation.closeAllPositions': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    operation: () => `mutation { closeAllPositions(accountId: "${cash}") { id } }`,
  },
  // The DEV sandbox (every token here is from the platform's DEV auth): the caller's own orders and transfers only.
  'Mutation.sandboxFillOrder': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    operation: async (f) => `mutation { sandboxFillOrder(orderId: "${await f.restingOrder()}") { id } }`,
  },
  'Mutation.sandboxRejectOrder': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    operation: async (f) => `mutation { sandboxRejectOrder(orderId: "${await f.restingOrder()}", reason: "authz") { id } }`,
  },
  'Mutation.sandboxExpireOrder': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    operation: async (f) => `mutation { sandboxExpireOrder(orderId: "${await f.restingOrder()}") { id } }`,
  },
  'Mutation.sandboxFailFundingTransaction': {
    ...write('write:banking'),
    otherUser: '404 NOT_FOUND',
    operation: async (f) => `mutation { sandboxFailFundingTransaction(transactionId: "${await f.pendingDeposit()}") { id } }`,
  },
};

/** Every route of the facade's route table, by method and path. A route without a row fails the test. */
const ROUTE_ROWS: Record<string, RouteRow> = {
  'GET /accounts': { ...read('read:accounts'), otherUser: 'ok', request: () => ({ path: '/accounts' }) },
  'GET /accounts/:accountId': { ...read('read:accounts'), otherUser: '404 NOT_FOUND', request: () => ({ path: `/accounts/${cash}` }) },
  'PATCH /accounts/:accountId': {
    ...write('write:accounts'),
    otherUser: '404 NOT_FOUND',
    request: () => ({ path: `/accounts/${cash}`, body: { nickname: 'authz' } }),
  },
  'GET /accounts/:accountId/positions': {
    ...read('read:accounts'),
    otherUser: '404 NOT_FOUND',
    request: () => ({ path: `/accounts/${margin}/positions` }),
  },
  'GET /accounts/:accountId/position': {
    ...read('read:accounts'),
    otherUser: '404 NOT_FOUND',
    request: () => ({ path: `/accounts/${margin}/position?symbol=AAPL` }),
  },
  'GET /accounts/:accountId/margin': {
    ...read('read:accounts'),
    otherUser: '404 NOT_FOUND',
    request: () => ({ path: `/accounts/${margin}/margin` }),
  },
  'GET /accounts/:accountId/portfolios': {
    ...read('read:accounts'),
    otherUser: '404 NOT_FOUND',
    request: () => ({ path: `/accounts/${margin}/portfolios` }),
  },
  // The feed mixes the OMS's fills with banking's cash movements: no single scope reads it.
  'GET /accounts/:accountId/activities': {
    scopes: [],
    readOnly: 'ok',
    otherUser: '404 NOT_FOUND',
    request: () => ({ path: `/accounts/${cash}/activities` }),
  },
  'GET /banking/:accountId/balance': {
    ...read('read:banking'),
    otherUser: '404 NOT_FOUND',
    request: () => ({ path: `/banking/${cash}/balance` }),
  },
  'GET /banking/:accountId/balance/:ccy': {
    ...read('read:banking'),
    otherUser: '404 NOT_FOUND',
    request: () => ({ path: `/banking/${cash}/balance/USD` }),
  },
  'GET /banking/:accountId/activity': {
    ...read('read:banking'),
    otherUser: '404 NOT_FOUND',
    request: () => ({ path: `/banking/${cash}/activity` }),
  },
  'GET /banking/:accountId/txn-activity': {
    ...read('read:banking'),
    otherUser: '404 NOT_FOUND',
    request: () => ({ path: `/banking/${cash}/txn-activity` }),
  },
  'POST /banking/deposit': {
    ...write('write:banking'),
    otherUser: '404 NOT_FOUND',
    request: () => ({ path: '/banking/deposit', body: { accountId: cash, amount: '1.00', currency: 'USD' } }),
  },
  'POST /banking/withdraw': {
    ...write('write:banking'),
    otherUser: '404 NOT_FOUND',
    request: () => ({ path: '/banking/withdraw', body: { accountId: cash, amount: '1.00', currency: 'USD' } }),
  },
  'POST /banking/cancel-txn': {
    ...write('write:banking'),
    otherUser: '404 NOT_FOUND',
    request: async (f) => ({ path: '/banking/cancel-txn', body: { transactionId: await f.pendingDeposit() } }),
  },
  'GET /market/quotes': { ...read('read:market'), otherUser: 'ok', request: () => ({ path: '/market/quotes?symbols=AAPL' }) },
  'GET /market/bars': {
    ...read('read:market'),
    otherUser: 'ok',
    request: () => ({ path: '/market/bars?symbols=AAPL,MSFT&timeframe=1Month' }),
  },
  'GET /market/bars/:symbol': { ...read('read:market'), otherUser: 'ok', request: () => ({ path: '/market/bars/AAPL?timeframe=1Day' }) },
  'GET /market/clock': { ...read('read:market'), otherUser: 'ok', request: () => ({ path: '/market/clock' }) },
  'GET /market/calendar': { ...read('read:market'), otherUser: 'ok', request: () => ({ path: '/market/calendar' }) },
  'GET /market/instruments': { ...read('read:market'), otherUser: 'ok', request: () => ({ path: '/market/instruments' }) },
  'GET /market/instruments/:symbol': { ...read('read:market'), otherUser: 'ok', request: () => ({ path: '/market/instruments/AAPL' }) },
  'DELETE /accounts/:accountId/positions/:symbol': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    request: () => ({ path: `/accounts/${margin}/positions/AAPL?quantity=1` }),
  },
  'DELETE /accounts/:accountId/positions': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    request: () => ({ path: `/accounts/${cash}/positions` }),
  },
  'GET /oms/:accountId/order/rules': {
    ...read('read:orders'),
    otherUser: '404 NOT_FOUND',
    request: () => ({ path: `/oms/${cash}/order/rules` }),
  },
  'POST /oms/what-if': { ...write('read:orders'), otherUser: '404 NOT_FOUND', request: () => ({ path: '/oms/what-if', body: buy() }) },
  'POST /oms/order': { ...write('write:orders'), otherUser: '404 NOT_FOUND', request: () => ({ path: '/oms/order', body: buy() }) },
  'PUT /oms/order': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    request: async (f) => ({ path: '/oms/order', body: { accountId: cash, orderId: await f.restingOrder(), limitPrice: '101.00' } }),
  },
  'DELETE /oms/order': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    request: async (f) => ({ path: `/oms/order?orderId=${await f.restingOrder()}` }),
  },
  'GET /oms/:accountId/orders': { ...read('read:orders'), otherUser: '404 NOT_FOUND', request: () => ({ path: `/oms/${cash}/orders` }) },
  'GET /oms/:accountId/order/:orderId': {
    ...read('read:orders'),
    otherUser: '404 NOT_FOUND',
    request: async (f) => ({ path: `/oms/${cash}/order/${await f.restingOrder()}` }),
  },
  'GET /oms/:accountId/order/by-client-id/:clientOrderId': {
    ...read('read:orders'),
    otherUser: '404 NOT_FOUND',
    request: async (f) => ({ path: `/oms/${cash}/order/by-client-id/${await f.restingClientOrderId()}` }),
  },
  'DELETE /oms/:accountId/order/by-client-id/:clientOrderId': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    request: async (f) => ({ path: `/oms/${cash}/order/by-client-id/${await f.restingClientOrderId()}` }),
  },
  'GET /oms/:accountId/trades': { ...read('read:orders'), otherUser: '404 NOT_FOUND', request: () => ({ path: `/oms/${cash}/trades` }) },
  'POST /sandbox/orders/:orderId/fill': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    request: async (f) => ({ path: `/sandbox/orders/${await f.restingOrder()}/fill`, body: { quantity: '1' } }),
  },
  'POST /sandbox/orders/:orderId/reject': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    request: async (f) => ({ path: `/sandbox/orders/${await f.restingOrder()}/reject`, body: { reason: 'authz' } }),
  },
  'POST /sandbox/orders/:orderId/expire': {
    ...write('write:orders'),
    otherUser: '404 NOT_FOUND',
    request: async (f) => ({ path: `/sandbox/orders/${await f.restingOrder()}/expire` }),
  },
  'POST /sandbox/funding/:transactionId/fail': {
    ...write('write:banking'),
    otherUser: '404 NOT_FOUND',
    request: async (f) => ({ path: `/sandbox/funding/${await f.pendingDeposit()}/fail`, body: { reason: 'authz' } }),
  },
};

type TokenKind = `vendor ${Scope}` | 'READ_ONLY PAT' | 'READ_WRITE PAT' | 'no token' | "another user's READ_WRITE PAT";
const TOKEN_KINDS: TokenKind[] = [
  ...SCOPES.map((s) => `vendor ${s}` as const),
  'READ_ONLY PAT',
  'READ_WRITE PAT',
  'no token',
  "another user's READ_WRITE PAT",
];

/** What the row says a token of this kind gets. */
function expected(row: Row, kind: TokenKind): Outcome {
  if (kind === 'no token') return '401 UNAUTHENTICATED';
  if (kind === 'READ_WRITE PAT') return 'ok';
  if (kind === 'READ_ONLY PAT') return row.readOnly === 'ok' ? 'ok' : '403 READ_ONLY_TOKEN';
  if (kind === "another user's READ_WRITE PAT") return row.otherUser;
  return row.scopes.includes(kind.slice('vendor '.length) as Scope) ? 'ok' : '403 INSUFFICIENT_SCOPE';
}

/** The root fields a caller of the gateway can ask for: the supergraph's API schema, read with graphql-js. */
function supergraphRootFields(): string[] {
  const sdl = readFileSync(join(__dirname, '../../../../libs/gateway-service/src/supergraph.graphql'), 'utf8');
  const schema = Supergraph.build(sdl).apiSchema().toGraphQLJSSchema();
  return [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].flatMap((root) =>
    root ? Object.keys(root.getFields()).map((field) => `${root.name}.${field}`) : [],
  );
}

const problemOutcome = (status: number, code: string | undefined) =>
  `${status} ${code}${code && statusForCode(code) !== status ? ` (the code's status is ${statusForCode(code)})` : ''}`;

/**
 * Every GraphQL root field and every REST route, with each kind of token: the outcome the table
 * says, so that a rule moved in any of the places authorization is checked (the facade's route
 * scopes and method rule, the gateway, the subgraphs' scope rules, banking's and the OMS's owner
 * checks) shows up here, and a new field or route must come with its row.
 */
describe('authorization: every field and route, with every kind of token', () => {
  let p: TestPlatform;
  const tokens = new Map<TokenKind, string | undefined>();
  let fixtures: Fixtures;

  beforeAll(async () => {
    p = await startOrdersPlatform();
    await p.oms.engine.pause(); // resting orders stay resting, closes stay open: every call sees the same book
    const writer = await patSession(p, alice.email, 'READ_WRITE');
    const app = await provisionApp(p, { scopes: [...SCOPES] }, [...SCOPES]);
    for (const scope of SCOPES) tokens.set(`vendor ${scope}`, (await tokensFor(p, app, alice, scope)).access_token);
    tokens.set('READ_ONLY PAT', await patSession(p, alice.email, 'READ_ONLY'));
    tokens.set('READ_WRITE PAT', writer);
    tokens.set('no token', undefined);
    tokens.set("another user's READ_WRITE PAT", await patSession(p, bob.email, 'READ_WRITE'));
    const made = async (path: string, body: unknown) => {
      const res = await http('POST', `${p.urls.api}${path}`, { token: writer, body });
      if (res.status !== 201) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body.id as string;
    };
    fixtures = {
      restingOrder: () => made('/oms/order', buy('99.00')),
      restingClientOrderId: async () => {
        const clientOrderId = `authz-${randomUUID()}`;
        await made('/oms/order', { ...buy('99.00'), clientOrderId });
        return clientOrderId;
      },
      pendingDeposit: () => made('/banking/deposit', { accountId: cash, amount: '1.00', currency: 'USD' }),
    };
  }, 90_000);
  afterAll(async () => {
    p?.oms.engine.resume();
    await p?.stop();
  });

  it('has a row for every GraphQL root field and every REST route, and none for anything gone', () => {
    const [fields, routes] = [supergraphRootFields(), ROUTES.map((r) => `${r.method} ${r.path}`)];
    expect({
      fieldsWithoutRow: fields.filter((f) => !FIELDS[f]),
      routesWithoutRow: routes.filter((r) => !ROUTE_ROWS[r]),
      rowsOfNoField: Object.keys(FIELDS).filter((f) => !fields.includes(f)),
      rowsOfNoRoute: Object.keys(ROUTE_ROWS).filter((r) => !routes.includes(r)),
    }).toEqual({ fieldsWithoutRow: [], routesWithoutRow: [], rowsOfNoField: [], rowsOfNoRoute: [] });
  });

  it('every GraphQL root field at the gateway answers each kind of token as its row says', async () => {
    const wrong: string[] = [];
    for (const field of supergraphRootFields()) {
      const row = FIELDS[field];
      if (!row) continue; // the row check above names it
      const name = field.split('.')[1]!;
      for (const kind of TOKEN_KINDS) {
        const res = await http('POST', p.urls.gateway, { token: tokens.get(kind), body: { query: await row.operation(fixtures) } });
        const code: string | undefined = res.body?.errors?.[0]?.extensions?.code;
        const outcome =
          res.status !== 200 || code
            ? problemOutcome(code ? statusForCode(code) : res.status, code)
            : res.body.data?.[name] === null
              ? 'null'
              : 'ok';
        if (outcome !== expected(row, kind)) wrong.push(`${field} with ${kind}: ${outcome}, expected ${expected(row, kind)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('every REST route answers each kind of token as its row says', async () => {
    const wrong: string[] = [];
    for (const route of ROUTES) {
      const key = `${route.method} ${route.path}`;
      const row = ROUTE_ROWS[key];
      if (!row) continue; // the row check above names it
      for (const kind of TOKEN_KINDS) {
        const { path, body } = await row.request(fixtures);
        const res = await http(route.method, `${p.urls.api}${path}`, { token: tokens.get(kind), body });
        const outcome = res.status < 300 ? 'ok' : problemOutcome(res.status, res.body?.code);
        if (outcome !== expected(row, kind)) wrong.push(`${key} with ${kind}: ${outcome}, expected ${expected(row, kind)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('attack: every REST route refuses a query parameter it does not take with 400 naming it, before anything runs, with or without a token', async () => {
    const wrong: string[] = [];
    const writer = tokens.get('READ_WRITE PAT');
    const extra = [
      ...AUTHENTICATED_AUTH_ROUTES.map((r) => ({ method: r.method, key: `${r.method} ${r.path}`, path: r.path, body: undefined })),
      { method: 'GET', key: 'GET /oms/:accountId/events', path: `/oms/${cash}/events`, body: undefined },
      { method: 'GET', key: 'GET /market/events', path: '/market/events?symbols=AAPL', body: undefined },
    ];
    const routes = [
      ...(await Promise.all(
        ROUTES.filter((r) => ROUTE_ROWS[`${r.method} ${r.path}`]).map(async (r) => ({
          method: r.method,
          key: `${r.method} ${r.path}`,
          ...(await ROUTE_ROWS[`${r.method} ${r.path}`]!.request(fixtures)),
        })),
      )),
      ...extra,
    ];
    // With a token and without: refused before anything runs, the token check included.
    for (const route of routes)
      for (const token of [writer, undefined]) {
        const url = `${p.urls.api}${route.path}${route.path.includes('?') ? '&' : '?'}shadowFilter=1`;
        const res = await http(route.method, url, { token, body: route.body });
        const outcome = `${res.status} ${res.body?.code} ${res.body?.field}`;
        if (outcome !== '400 BAD_USER_INPUT shadowFilter') wrong.push(`${route.key} ${token ? 'with' : 'without'} a token: ${outcome}`);
      }
    expect(wrong).toEqual([]);
  });

  it('OPTIONS on every path answers 204 with Allow for any valid token, READ_ONLY included, and 401 without one', async () => {
    const wrong: string[] = [];
    const paths = new Map<string, string[]>();
    const known = [
      ...ROUTES,
      ...AUTHENTICATED_AUTH_ROUTES,
      { method: 'GET', path: '/oms/:accountId/events' },
      { method: 'GET', path: '/market/events' },
    ];
    for (const { method, path } of known) paths.set(path, [...(paths.get(path) ?? []), method]);
    for (const [path, methods] of paths) {
      const concrete = path.replace(':accountId', cash).replace(':orderId', randomUUID()).replace(/:\w+/g, 'AAPL');
      for (const kind of ['READ_ONLY PAT', 'READ_WRITE PAT', 'vendor read:market', 'vendor write:orders'] as const) {
        const res = await http('OPTIONS', `${p.urls.api}${concrete}`, { token: tokens.get(kind) });
        const allow = res.headers.get('allow') ?? '';
        if (res.status !== 204 || !methods.every((m) => allow.split(', ').includes(m)) || !allow.includes('OPTIONS'))
          wrong.push(`OPTIONS ${path} with ${kind}: ${res.status} Allow: ${allow}`);
      }
      const anonymous = await http('OPTIONS', `${p.urls.api}${concrete}`);
      if (anonymous.status !== 401) wrong.push(`OPTIONS ${path} without a token: ${anonymous.status}`);
      const forged = await http('OPTIONS', `${p.urls.api}${concrete}`, { token: 'not-a-token' });
      if (forged.status !== 401) wrong.push(`OPTIONS ${path} with a bad token: ${forged.status}`);
    }
    expect(wrong).toEqual([]);
    const accounts = await http('OPTIONS', `${p.urls.api}/accounts`, { token: tokens.get('READ_ONLY PAT') });
    expect({ status: accounts.status, allow: accounts.headers.get('allow') }).toEqual({ status: 204, allow: 'GET, HEAD, OPTIONS' });
  });

  it('attack: a vendor token that may only read orders cancels no order over GraphQL', async () => {
    const order = await fixtures.restingOrder();
    const res = await http('POST', p.urls.gateway, {
      token: tokens.get('vendor read:orders'),
      body: { query: `mutation { cancelOrder(orderId: "${order}") { id status } }` },
    });
    expect(res.body.errors?.map((e: { extensions?: { code?: string } }) => e.extensions?.code)).toEqual(['INSUFFICIENT_SCOPE']);
    const after = await http('GET', `${p.urls.api}/oms/${cash}/order/${order}`, { token: tokens.get('READ_WRITE PAT') });
    expect(after.body.status).toBe('NEW');
  });
});
