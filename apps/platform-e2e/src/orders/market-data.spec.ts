import Decimal from 'decimal.js';
import { restContract } from '@trading/rest-facade-service';
import { http } from '@trading/testing';
import { admin } from '../support/oauth-helpers';
import { newUser, sessionToken } from '../support/pat-helpers';
import { EventStreamReader } from '../support/server-sent-events';
import { scopedSession } from '../support/sessions';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

/** Market data over REST and live quotes over Server-Sent Events. */
describe('market data: /v1/market/…', () => {
  let p: TestPlatform;
  let session: string;
  let email: string;
  let patId: string;
  const streams: EventStreamReader[] = [];
  const get = (path: string, token = session) => http('GET', `${p.urls.api}${path}`, { token });
  const open = async (query: string, token = session, lastEventId?: string) => {
    const s = await EventStreamReader.open(`${p.urls.api}/market/events?${query}`, token, lastEventId);
    streams.push(s);
    return s;
  };
  const onTick = (price: string, tick: string) => new Decimal(price).mod(tick).isZero();

  beforeAll(async () => {
    // A paused feed (prices move only by setPrice), a UTC session, and at most 2 quote streams per user.
    p = await startTestPlatform(
      {},
      { oms: { OMS_PRICE_TICK_MS: '0', OMS_TRADING_HOURS: '14:30-21:00' }, facade: { MARKET_EVENTS_MAX_STREAMS_PER_USER: 2 } },
    );
    const user = await newUser(p);
    email = user.email;
    // A READ_ONLY PAT: its session carries every read:* scope, read:market among them.
    const pat = await admin(p, 'POST', '/pats', { email, name: 'market', scope: 'READ_ONLY', expires: inDays(5) });
    patId = pat.body.tokenId;
    session = await sessionToken(p.urls.api, pat.body.token);
    await p.oms.feed.setPrice('AAPL', '190.00');
    await p.oms.feed.setPrice('MSFT', '402.10');
  }, 60_000);
  afterEach(() => {
    for (const s of streams.splice(0)) s.close();
  });
  afterAll(() => p?.stop());

  it('quotes two symbols: bid below and ask above the last price, on the tick, sizes in whole lots', async () => {
    const res = await get('/market/quotes?symbols=AAPL,MSFT');
    expect(res.status).toBe(200);
    expect(restContract.quoteList.safeParse(res.body).success).toBe(true);
    const [aapl, msft] = res.body.quotes;
    // Spread 0.1 %: half of it is 0.095 (AAPL) and 0.20105 (MSFT), rounded up to whole cents.
    expect(aapl).toMatchObject({ symbol: 'AAPL', lastPrice: '190.00', bid: '189.90', ask: '190.10', currency: 'USD' });
    expect(msft).toMatchObject({ symbol: 'MSFT', lastPrice: '402.10', bid: '401.89', ask: '402.31', currency: 'USD' });
    for (const q of [aapl, msft]) {
      expect(new Decimal(q.bid).lt(q.lastPrice) && new Decimal(q.ask).gt(q.lastPrice)).toBe(true);
      expect([q.bid, q.ask, q.lastPrice].every((x) => onTick(x, '0.01'))).toBe(true);
      expect(Number(q.bidSize) % 100).toBe(0);
      expect(Number(q.askSize) % 100).toBe(0);
      expect(Math.abs(Date.parse(q.timestamp) - Date.now())).toBeLessThan(60_000);
    }
    // Deterministic: the same price, the same book.
    expect((await get('/market/quotes?symbols=AAPL')).body.quotes[0]).toEqual(aapl);
  });

  it('lists unknown symbols apart and still quotes the others', async () => {
    const res = await get('/market/quotes?symbols=NOPE,AAPL,ZZZ9,AAPL');
    expect(res.status).toBe(200);
    expect(restContract.quoteList.safeParse(res.body).success).toBe(true);
    expect(res.body.quotes.map((q: { symbol: string }) => q.symbol)).toEqual(['AAPL']);
    expect(res.body.unknownSymbols).toEqual(['NOPE', 'ZZZ9']);
    expect((await get('/market/quotes?symbols=AAPL,MSFT')).body.unknownSymbols).toEqual([]);
    expect((await get('/market/quotes?symbols=NOPE')).body).toEqual({ quotes: [], unknownSymbols: ['NOPE'] });
  });

  it('refuses missing, empty, malformed and too many symbols with a 422 naming symbols', async () => {
    const many = Array.from({ length: 101 }, (_, i) => `S${i}`).join(',');
    for (const query of ['symbols=', '', `symbols=${many}`, 'symbols=aapl!']) {
      const res = await get(`/market/quotes?${query}`);
      expect({ query, status: res.status, field: res.body.field, type: res.headers.get('content-type') }).toEqual({
        query,
        status: 422,
        field: 'symbols',
        type: expect.stringMatching(/^application\/problem\+json/),
      });
    }
  });

  it('aggregates known ticks into exact OHLCV bars per timeframe, paged with a cursor', async () => {
    const day = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() - 2));
    const base = day.getTime() + 10 * 3_600_000; // 10:00 UTC two days ago
    const at = (minutes: number, seconds = 0) => new Date(base + minutes * 60_000 + seconds * 1000);
    await p.oms.feed.ticks!.record(p.oms.dataSource.manager, [
      { symbol: 'TSLA', price: '100.00', volume: '5', at: at(0, 10) },
      { symbol: 'TSLA', price: '101.50', volume: '3', at: at(0, 20) },
      { symbol: 'TSLA', price: '99.25', volume: '2', at: at(0, 50) },
      { symbol: 'TSLA', price: '100.10', volume: '1', at: at(1) },
      { symbol: 'TSLA', price: '100.20', volume: '4', at: at(1, 30) },
      { symbol: 'TSLA', price: '98.00', volume: '10', at: at(5) },
      { symbol: 'TSLA', price: '97.00', volume: '1', at: at(65) },
    ]);
    const iso = (minutes: number) => at(minutes).toISOString();
    const range = `start=${iso(0)}&end=${iso(120)}`;
    const bar = (start: number, open: string, high: string, low: string, close: string, volume: string, trades: number) => ({
      start: iso(start),
      open,
      high,
      low,
      close,
      volume,
      trades,
      tradeCount: trades,
      vwap: expect.stringMatching(/^\d+\.\d{2,8}$/),
    });

    const first = await get(`/market/bars/TSLA?timeframe=1Min&${range}&limit=2`);
    expect(first.status).toBe(200);
    expect(restContract.barPage.safeParse(first.body).success).toBe(true);
    expect(first.body).toMatchObject({ symbol: 'TSLA', timeframe: '1Min', currency: 'USD' });
    expect(first.body.bars).toEqual([
      bar(0, '100.00', '101.50', '99.25', '99.25', '10', 3),
      bar(1, '100.10', '100.20', '100.10', '100.20', '5', 2),
    ]);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await get(`/market/bars/TSLA?timeframe=1Min&${range}&limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(second.body.bars).toEqual([
      bar(5, '98.00', '98.00', '98.00', '98.00', '10', 1),
      bar(65, '97.00', '97.00', '97.00', '97.00', '1', 1),
    ]);
    expect(second.body.nextCursor).toBeNull();

    expect((await get(`/market/bars/TSLA?timeframe=5Min&${range}`)).body.bars).toEqual([
      bar(0, '100.00', '101.50', '99.25', '100.20', '15', 5),
      bar(5, '98.00', '98.00', '98.00', '98.00', '10', 1),
      bar(65, '97.00', '97.00', '97.00', '97.00', '1', 1),
    ]);
    expect((await get(`/market/bars/TSLA?timeframe=1Hour&${range}`)).body.bars).toEqual([
      bar(0, '100.00', '101.50', '98.00', '98.00', '25', 6),
      bar(60, '97.00', '97.00', '97.00', '97.00', '1', 1),
    ]);
    const daily = await get(`/market/bars/TSLA?timeframe=1Day&start=${day.toISOString().slice(0, 10)}&end=${iso(120)}`);
    expect(daily.body.bars).toEqual([{ ...bar(0, '100.00', '101.50', '97.00', '97.00', '26', 7), start: day.toISOString() }]);
    // VWAP exactly: (100 × 5 + 101.5 × 3 + 99.25 × 2) / 10 and, over the hour, 2,483.9 / 25.
    expect((await get(`/market/bars/TSLA?timeframe=1Min&${range}&limit=1`)).body.bars[0].vwap).toBe('100.30');
    expect((await get(`/market/bars/TSLA?timeframe=1Hour&${range}`)).body.bars.map((b: { vwap: string }) => b.vwap)).toEqual([
      '99.356',
      '97.00',
    ]);
    // The range is honoured: end is exclusive.
    expect((await get(`/market/bars/TSLA?timeframe=1Min&start=${iso(0)}&end=${iso(1)}`)).body.bars).toHaveLength(1);

    // A cursor pages only the query it came from.
    const other = await get(`/market/bars/TSLA?timeframe=5Min&${range}&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect([other.status, other.body.field]).toEqual([400, 'cursor']);
  });

  it('refuses a bad timeframe, start or end with a 422 naming it, and an unknown symbol with a 404', async () => {
    for (const [query, field] of [
      ['timeframe=2Min', 'timeframe'],
      ['', 'timeframe'],
      ['timeframe=1Min&start=yesterday', 'start'],
      ['timeframe=1Min&end=2026-02-30', 'end'],
      ['timeframe=1Min&start=2026-02-02&end=2026-02-01', 'start'],
    ]) {
      const res = await get(`/market/bars/AAPL?${query}`);
      expect({ query, status: res.status, field: res.body.field }).toEqual({ query, status: 422, field });
    }
    const unknown = await get('/market/bars/NOPE?timeframe=1Min');
    expect([unknown.status, unknown.body.field]).toEqual([404, 'symbol']);
    expect((await get('/market/bars/AAPL?timeframe=1Min&limit=0')).body.field).toBe('limit');
  });

  it('answers several symbols at once, keyed by symbol, unknown ones apart, paged across symbols with nextPageToken', async () => {
    const day = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() - 3, 9));
    await p.oms.feed.ticks!.record(p.oms.dataSource.manager, [
      { symbol: 'AAPL', price: '190.00', volume: '2', at: day },
      { symbol: 'AAPL', price: '191.00', volume: '1', at: new Date(day.getTime() + 20 * 60_000) },
      { symbol: 'MSFT', price: '400.00', volume: '1', at: day },
    ]);
    const range = `start=${day.toISOString()}&end=${new Date(day.getTime() + 3_600_000).toISOString()}`;
    const all = await get(`/market/bars?symbols=MSFT,NOPE,AAPL&timeframe=15Min&${range}`);
    expect(all.status).toBe(200);
    expect(restContract.barSets.safeParse(all.body).success).toBe(true);
    expect(all.body).toEqual({
      timeframe: '15Min',
      bars: {
        AAPL: [
          expect.objectContaining({ start: day.toISOString(), close: '190.00', tradeCount: 1, vwap: '190.00' }),
          expect.objectContaining({ start: new Date(day.getTime() + 15 * 60_000).toISOString(), close: '191.00', vwap: '191.00' }),
        ],
        MSFT: [expect.objectContaining({ start: day.toISOString(), open: '400.00', volume: '1', vwap: '400.00' })],
      },
      currencies: { AAPL: 'USD', MSFT: 'USD' },
      unknownSymbols: ['NOPE'],
      nextPageToken: null,
    });
    expect(Object.keys(all.body.bars)).toEqual(['AAPL', 'MSFT']);
    // Two bars a page: AAPL's two, then MSFT's.
    const first = await get(`/market/bars?symbols=MSFT,AAPL&timeframe=15Min&${range}&limit=2`);
    expect([Object.keys(first.body.bars), first.body.nextPageToken]).toEqual([['AAPL'], expect.any(String)]);
    const next = await get(
      `/market/bars?symbols=MSFT,AAPL&timeframe=15Min&${range}&limit=2&pageToken=${encodeURIComponent(first.body.nextPageToken)}`,
    );
    expect([Object.keys(next.body.bars), next.body.nextPageToken]).toEqual([['MSFT'], null]);
    // The single-symbol route takes the same token name.
    const one = await get(`/market/bars/AAPL?timeframe=15Min&${range}&limit=1`);
    expect(one.body.nextPageToken).toBe(one.body.nextCursor);
    const rest = await get(`/market/bars/AAPL?timeframe=15Min&${range}&limit=1&pageToken=${encodeURIComponent(one.body.nextPageToken)}`);
    expect([rest.body.bars.length, rest.body.nextPageToken]).toEqual([1, null]);
    expect((await get(`/market/bars?symbols=NOPE&timeframe=1Day`)).body).toEqual({
      timeframe: '1Day',
      bars: {},
      currencies: {},
      unknownSymbols: ['NOPE'],
      nextPageToken: null,
    });
  });

  it('refuses too many, malformed or missing symbols and a limit out of range with a 400 naming the field; takes 10,000 bars a call', async () => {
    const many = Array.from({ length: 51 }, (_, i) => `S${i}`).join(',');
    for (const [query, field] of [
      [`symbols=${many}&timeframe=1Min`, 'symbols'],
      ['symbols=&timeframe=1Min', 'symbols'],
      ['timeframe=1Min', 'symbols'],
      ['symbols=aapl!&timeframe=1Min', 'symbols'],
      ['symbols=AAPL&timeframe=1Min&limit=10001', 'limit'],
      ['symbols=AAPL&timeframe=1Min&limit=0', 'limit'],
      ['symbols=AAPL&timeframe=1Min&limit=ten', 'limit'],
      ['symbols=AAPL&timeframe=1Min&pageToken=forged', 'pageToken'],
      ['symbols=AAPL&timeframe=1Min&cursor=x', 'cursor'],
    ]) {
      const res = await get(`/market/bars?${query}`);
      expect({ query, status: res.status, field: res.body.field, code: res.body.code }).toEqual({
        query,
        status: 400,
        field,
        code: 'BAD_USER_INPUT',
      });
    }
    for (const [query, field] of [
      ['symbols=AAPL&timeframe=3Hour', 'timeframe'],
      ['symbols=AAPL&timeframe=1Min&start=2026-02-30', 'start'],
    ]) {
      const res = await get(`/market/bars?${query}`);
      expect({ query, status: res.status, field: res.body.field }).toEqual({ query, status: 422, field });
    }
    const fifty = Array.from({ length: 50 }, (_, i) => `S${i}`).join(',');
    expect((await get(`/market/bars?symbols=${fifty}&timeframe=1Min`)).status).toBe(200);
    for (const path of ['/market/bars?symbols=AAPL,MSFT,TSLA&timeframe=1Min&limit=10000', '/market/bars/AAPL?timeframe=1Min&limit=10000']) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
    expect((await get('/market/bars/AAPL?timeframe=1Min&limit=10001')).body.field).toBe('limit');
  });

  it('tells the clock and the calendar of OMS_TRADING_HOURS', async () => {
    const before = Date.now();
    const res = await get('/market/clock');
    expect(res.status).toBe(200);
    expect(restContract.marketClock.safeParse(res.body).success).toBe(true);
    const now = Date.parse(res.body.timestamp);
    expect(now).toBeGreaterThanOrEqual(before - 1000);
    const minute = new Date(now).getUTCHours() * 60 + new Date(now).getUTCMinutes();
    expect(res.body.isOpen).toBe(minute >= 14 * 60 + 30 && minute < 21 * 60);
    expect(res.body.nextOpen).toMatch(/T14:30:00\.000Z$/);
    expect(res.body.nextClose).toMatch(/T21:00:00\.000Z$/);
    for (const next of [res.body.nextOpen, res.body.nextClose]) {
      expect(Date.parse(next)).toBeGreaterThan(now);
      expect(Date.parse(next) - now).toBeLessThanOrEqual(86400_000);
    }

    const calendar = await get('/market/calendar?start=2026-02-27&end=2026-03-01');
    expect(calendar.status).toBe(200);
    expect(calendar.body).toEqual({
      calendar: [
        { date: '2026-02-27', open: '2026-02-27T14:30:00.000Z', close: '2026-02-27T21:00:00.000Z' },
        { date: '2026-02-28', open: '2026-02-28T14:30:00.000Z', close: '2026-02-28T21:00:00.000Z' },
        { date: '2026-03-01', open: '2026-03-01T14:30:00.000Z', close: '2026-03-01T21:00:00.000Z' },
      ],
    });
    expect((await get('/market/calendar')).body.calendar).toHaveLength(30);
    for (const [query, field] of [
      ['start=2026-01-01&end=2027-01-02', 'end'],
      ['start=2026-13-01', 'start'],
      ['start=2026-03-02&end=2026-03-01', 'end'],
    ]) {
      const refused = await get(`/market/calendar?${query}`);
      expect({ query, status: refused.status, field: refused.body.field }).toEqual({ query, status: 422, field });
    }
  });

  it('lists instruments and shows one, with tick, lot, limits and status', async () => {
    const list = await get('/market/instruments');
    expect(list.status).toBe(200);
    expect(restContract.marketInstrumentList.safeParse(list.body).success).toBe(true);
    const symbols = list.body.instruments.map((i: { symbol: string }) => i.symbol);
    expect(symbols).toEqual([...symbols].sort());
    expect(symbols).toEqual(expect.arrayContaining(['AAPL', 'MSFT', 'TSLA']));
    const aapl = await get('/market/instruments/AAPL');
    expect(aapl.body).toEqual({
      symbol: 'AAPL',
      name: expect.any(String),
      currency: 'USD',
      tickSize: '0.01',
      lotSize: '1',
      minQuantity: '1',
      maxQuantity: expect.any(String),
      status: 'ACTIVE',
      tradable: true,
      lastPrice: '190.00',
      previousClose: expect.any(String),
    });
    const unknown = await get('/market/instruments/NOPE');
    expect([unknown.status, unknown.body.field]).toEqual([404, 'symbol']);
  });

  it('needs read:market: a token without it gets 403 on every market path and the stream', async () => {
    const narrow = await scopedSession(p, email, ['read:accounts', 'read:orders']);
    for (const path of [
      '/market/quotes?symbols=AAPL',
      '/market/bars/AAPL?timeframe=1Min',
      '/market/clock',
      '/market/calendar',
      '/market/instruments',
    ]) {
      const res = await get(path, narrow);
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 403, code: 'INSUFFICIENT_SCOPE' });
    }
    expect((await open('symbols=AAPL', narrow)).status).toBe(403);
    expect((await get('/market/clock', 'not-a-token')).status).toBe(401);
    const withIt = await scopedSession(p, email, ['read:market']);
    expect((await get('/market/clock', withIt)).status).toBe(200);
  });

  it('streams live quotes: the current ones first, then each price change; Last-Event-ID starts again with the current ones', async () => {
    const stream = await open('symbols=AAPL,MSFT');
    expect(stream.status).toBe(200);
    const first = [(await stream.next())!, (await stream.next())!];
    expect(first.map((e) => [e.event, e.data.symbol])).toEqual([
      ['quote', 'AAPL'],
      ['quote', 'MSFT'],
    ]);
    expect(first[0]!.id).toMatch(/^\d+-\d+$/);
    await p.oms.feed.setPrice('TSLA', '250.00'); // not asked for: not sent
    await p.oms.feed.setPrice('AAPL', '191.00');
    const moved = (await stream.next())!;
    expect(moved).toMatchObject({ event: 'quote', data: { symbol: 'AAPL', lastPrice: '191.00', bid: '190.90', ask: '191.10' } });
    expect(restContract.marketQuote.safeParse(moved.data).success).toBe(true);
    expect(moved.id).toMatch(/^\d+-\d+$/);
    stream.close();

    const resumed = await open('symbols=AAPL', session, moved.id);
    expect(await resumed.next()).toMatchObject({ event: 'quote', data: { symbol: 'AAPL', lastPrice: '191.00' } });
    expect((await open('symbols=AAPL', session, 'garbage')).status).toBe(400);
    expect((await open('symbols=AAPL,NOPE')).status).toBe(422);
  }, 30_000);

  // Last: it revokes the spec's PAT.
  it('caps open quote streams per user and ends them when the session is revoked', async () => {
    const a = await open('symbols=AAPL');
    const b = await open('symbols=MSFT');
    expect([a.status, b.status]).toEqual([200, 200]);
    expect((await open('symbols=AAPL')).status).toBe(429);
    await a.next();
    await b.next();
    const writer = await admin(p, 'POST', '/pats', { email, name: 'revoker', scope: 'READ_WRITE', expires: inDays(5) });
    const revoker = await sessionToken(p.urls.api, writer.body.token);
    expect((await http('POST', `${p.urls.api}/pat/revoke`, { token: revoker, body: { tokenId: patId } })).status).toBe(200);
    for (const s of [a, b]) {
      expect(await s.next(5000)).toMatchObject({ event: 'end', data: { reason: expect.any(String) } });
      expect(await s.next(5000)).toBeNull();
    }
  }, 30_000);
});

/** The market clock on a real exchange calendar (OMS_TRADING_HOURS=US): weekends, holidays, early closes. */
describe('market clock on the US calendar: /v1/market/clock, /v1/market/calendar', () => {
  let p: TestPlatform;
  let session: string;
  const get = (path: string) => http('GET', `${p.urls.api}${path}`, { token: session });

  beforeAll(async () => {
    p = await startTestPlatform({}, { oms: { OMS_PRICE_TICK_MS: '0', OMS_TRADING_HOURS: 'US' } });
    const { email } = await newUser(p);
    const pat = await admin(p, 'POST', '/pats', { email, name: 'us-clock', scope: 'READ_ONLY', expires: inDays(5) });
    session = await sessionToken(p.urls.api, pat.body.token);
  }, 60_000);
  afterAll(() => p?.stop());

  it('answers a real next open: 09:30 New York on a weekday, and the Thanksgiving week without the holiday', async () => {
    const res = await get('/market/clock');
    expect(res.status).toBe(200);
    expect(restContract.marketClock.safeParse(res.body).success).toBe(true);
    // 09:30 New York is 13:30 UTC in summer, 14:30 UTC in winter.
    expect(res.body.nextOpen).toMatch(/T1[34]:30:00\.000Z$/);
    expect([1, 2, 3, 4, 5]).toContain(new Date(res.body.nextOpen).getUTCDay());
    expect(Date.parse(res.body.nextOpen)).toBeGreaterThan(Date.parse(res.body.timestamp));

    const calendar = await get('/market/calendar?start=2026-11-23&end=2026-11-29');
    expect(calendar.body).toEqual({
      calendar: [
        { date: '2026-11-23', open: '2026-11-23T14:30:00.000Z', close: '2026-11-23T21:00:00.000Z' },
        { date: '2026-11-24', open: '2026-11-24T14:30:00.000Z', close: '2026-11-24T21:00:00.000Z' },
        { date: '2026-11-25', open: '2026-11-25T14:30:00.000Z', close: '2026-11-25T21:00:00.000Z' },
        { date: '2026-11-27', open: '2026-11-27T14:30:00.000Z', close: '2026-11-27T18:00:00.000Z' },
      ],
    });
  });
});
