import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { openApiDocument } from '@trading/rest-facade-service';
import { http, openApiResponseValidator } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

const conforms = openApiResponseValidator(openApiDocument);
const [alice, bob] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id;

/**
 * Sends one HTTP request on a raw socket and cuts the connection as soon as it is written, before
 * any answer: what a client sees when its placement times out. It never learns the order's id.
 */
function sendAndHangUp(url: string, token: string, body: unknown): Promise<void> {
  const { hostname, port, pathname } = new URL(url);
  const payload = JSON.stringify(body);
  const request = [
    `POST ${pathname} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    `Authorization: Bearer ${token}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(payload)}`,
    'Connection: close',
    '',
    payload,
  ].join('\r\n');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request, () => (socket.destroy(), resolve())));
    socket.on('data', () => reject(new Error('an answer arrived before the connection was cut')));
    socket.on('error', reject);
  });
}

/** Finding and cancelling orders by the client's own id, and the order list's filters, from outside over HTTP. */
describe('orders by clientOrderId, and strict list filters', () => {
  let p: TestPlatform;
  let writer: string;
  let reader: string;
  let bobWriter: string;
  const api = (path: string) => p.urls.api + path;
  const resting = (extra: Record<string, unknown> = {}) => ({
    accountId: aliceCash,
    symbol: 'AAPL',
    side: 'BUY',
    type: 'LIMIT',
    timeInForce: 'GTC',
    quantity: '1',
    limitPrice: '100.00',
    ...extra,
  });
  const byClientId = (clientOrderId: string, token = reader, accountId = aliceCash) =>
    http('GET', api(`/oms/${accountId}/order/by-client-id/${encodeURIComponent(clientOrderId)}`), { token });
  const place = async (body: Record<string, unknown>) => {
    const res = await http('POST', api('/oms/order'), { token: writer, body });
    if (res.status !== 201) throw new Error(`placing answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body as { id: string; clientOrderId: string; status: string };
  };
  /** Every order of Alice's cash account the list answers with `query`, over all pages. */
  const listAll = async (query: string) => {
    const orders: Array<{ id: string; status: string; symbol: string; clientOrderId: string }> = [];
    let cursor: string | null = null;
    do {
      const res = await http('GET', api(`/oms/${aliceCash}/orders?limit=100${query}${cursor ? `&cursor=${cursor}` : ''}`), {
        token: reader,
      });
      if (res.status !== 200) throw new Error(`list answered ${res.status}: ${JSON.stringify(res.body)}`);
      conforms('GET', '/oms/{accountId}/orders', 200, res.body);
      orders.push(...res.body.orders);
      cursor = res.body.nextCursor;
    } while (cursor);
    return orders;
  };

  beforeAll(async () => {
    p = await startOrdersPlatform();
    writer = await patSession(p, alice.email, 'READ_WRITE');
    reader = await patSession(p, alice.email, 'READ_ONLY');
    bobWriter = await patSession(p, bob.email, 'READ_WRITE');
  }, 60_000);
  afterAll(() => p?.stop());

  it('attack: a placement whose connection is cut before the answer is found by its clientOrderId, exactly once, and a retry places nothing', async () => {
    const clientOrderId = `timeout-${randomUUID()}`;
    await sendAndHangUp(api('/oms/order'), writer, resting({ clientOrderId }));
    const found = await until(
      () => byClientId(clientOrderId),
      (r) => r.status === 200,
      'the order placed before the hang-up',
    );
    conforms('GET', '/oms/{accountId}/order/by-client-id/{clientOrderId}', 200, found.body);
    expect(found.body).toMatchObject({ clientOrderId, accountId: aliceCash, symbol: 'AAPL', side: 'BUY', quantity: '1' });
    // The client, unsure, retries with the same clientOrderId: refused, and still one order.
    const retry = await http('POST', api('/oms/order'), { token: writer, body: resting({ clientOrderId }) });
    expect(retry).toMatchObject({ status: 409, body: { code: 'CONFLICT', field: 'clientOrderId' } });
    expect((await byClientId(clientOrderId)).body.id).toBe(found.body.id);
    const withIt = (await listAll('&symbols=AAPL')).filter((o) => o.clientOrderId === clientOrderId);
    expect(withIt.map((o) => o.id)).toEqual([found.body.id]);
  });

  it('finds a bracket leg by the entry id with :tp or :sl, and answers 404 naming clientOrderId when none has it', async () => {
    const clientOrderId = `bracket-${randomUUID().slice(0, 8)}`;
    const entry = await place(
      resting({ clientOrderId, orderClass: 'BRACKET', takeProfit: { limitPrice: '120.00' }, stopLoss: { stopPrice: '90.00' } }),
    );
    expect((await byClientId(clientOrderId)).body.id).toBe(entry.id);
    expect((await byClientId(`${clientOrderId}:tp`)).body).toMatchObject({ leg: 'TAKE_PROFIT', parentOrderId: entry.id });
    expect(await byClientId('never-used')).toMatchObject({ status: 404, body: { code: 'NOT_FOUND', field: 'clientOrderId' } });
    expect(await byClientId('has space')).toMatchObject({ status: 400, body: { field: 'clientOrderId' } });
    expect(await byClientId('x'.repeat(80))).toMatchObject({ status: 400, body: { field: 'clientOrderId' } });
  });

  it("cancels by clientOrderId (again: the same answer); another user's token, a READ_ONLY token and an unknown id change nothing", async () => {
    const clientOrderId = `cancel-${randomUUID()}`;
    const order = await place(resting({ clientOrderId }));
    await until(
      () => byClientId(clientOrderId),
      (r) => r.body.status === 'NEW',
      'the order to work',
    );
    const path = api(`/oms/${aliceCash}/order/by-client-id/${clientOrderId}`);
    expect(await http('DELETE', path, { token: bobWriter })).toMatchObject({ status: 404, body: { field: 'accountId' } });
    expect(await http('DELETE', path, { token: reader })).toMatchObject({ status: 403, body: { code: 'READ_ONLY_TOKEN' } });
    expect((await byClientId(clientOrderId)).body.status).toBe('NEW');
    const cancelled = await http('DELETE', path, { token: writer });
    expect(cancelled).toMatchObject({ status: 200, body: { id: order.id, status: 'CANCELLED' } });
    conforms('DELETE', '/oms/{accountId}/order/by-client-id/{clientOrderId}', 200, cancelled.body);
    expect(await http('DELETE', path, { token: writer })).toMatchObject({ status: 200, body: { id: order.id, status: 'CANCELLED' } });
    expect(await http('DELETE', api(`/oms/${aliceCash}/order/by-client-id/never-used`), { token: writer })).toMatchObject({
      status: 404,
      body: { field: 'clientOrderId' },
    });
    // Bob cannot read Alice's order by its clientOrderId either.
    expect(await byClientId(clientOrderId, bobWriter)).toMatchObject({ status: 404, body: { field: 'accountId' } });
  });

  it('filters the list by status=open|closed|all and symbols=, and the filters combine', async () => {
    const open = await place(resting({ symbol: 'MSFT', clientOrderId: `open-${randomUUID()}` }));
    const closed = await place(resting({ symbol: 'MSFT', clientOrderId: `closed-${randomUUID()}` }));
    await until(
      () => http('GET', api(`/oms/${aliceCash}/order/${closed.id}`), { token: reader }),
      (r) => r.body.status === 'NEW',
      'the order to work',
    );
    expect((await http('DELETE', api(`/oms/order?orderId=${closed.id}`), { token: writer })).status).toBe(200);

    const all = await listAll('');
    const openOnes = await listAll('&status=open');
    const closedOnes = await listAll('&status=closed');
    expect(openOnes.every((o) => ['ACCEPTED', 'PENDING', 'NEW', 'PARTIALLY_FILLED'].includes(o.status))).toBe(true);
    expect(closedOnes.every((o) => ['FILLED', 'CANCELLED', 'REJECTED', 'EXPIRED'].includes(o.status))).toBe(true);
    expect(openOnes.map((o) => o.id)).toContain(open.id);
    expect(closedOnes.map((o) => o.id)).toContain(closed.id);
    expect(openOnes.length + closedOnes.length).toBe(all.length);
    expect((await listAll('&status=all')).length).toBe(all.length);
    expect((await listAll('&status=OPEN')).length).toBe(openOnes.length);
    expect((await listAll('&status=CANCELLED')).every((o) => o.status === 'CANCELLED')).toBe(true);

    const msft = await listAll('&symbols=MSFT');
    expect(msft.length).toBeGreaterThanOrEqual(2);
    expect(msft.every((o) => o.symbol === 'MSFT')).toBe(true);
    expect((await listAll('&symbols=AAPL,MSFT')).length).toBe(all.filter((o) => ['AAPL', 'MSFT'].includes(o.symbol)).length);
    expect((await listAll('&symbols=msft&status=open')).map((o) => o.id)).toEqual(
      openOnes.filter((o) => o.symbol === 'MSFT').map((o) => o.id),
    );
    expect(await listAll('&symbols=NOPE')).toEqual([]);
  });

  it('attack: a misspelt or unknown filter is refused with 400 naming it, never ignored into an answer of everything', async () => {
    for (const [query, field] of [
      ['clientOrderId=nonexistent', 'clientOrderId'],
      ['Status=open', 'Status'],
      ['symbol=AAPL', 'symbol'],
      ['status=open&limit=5&statuses=closed', 'statuses'],
      ['status=opened', 'status'],
      ['symbols=AAPL,no%20such', 'symbols'],
      [`symbols=${Array.from({ length: 101 }, (_, i) => `S${i}`).join(',')}`, 'symbols'],
    ] as const) {
      const res = await http('GET', api(`/oms/${aliceCash}/orders?${query}`), { token: reader });
      expect({ query, status: res.status, code: res.body.code, field: res.body.field }).toEqual({
        query,
        status: 400,
        code: 'BAD_USER_INPUT',
        field,
      });
      conforms('GET', '/oms/{accountId}/orders', 400, res.body);
    }
  });
});
