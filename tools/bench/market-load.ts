/**
 * The market-order load (in the load generator's process): market buys of one share placed through
 * the facade, MARKET_CONCURRENCY at a time and one per account, so each check is exact even beside
 * other holds. The account's order event stream says when the OMS filled an order; then banking's
 * hold row and accounts' position row are read by primary key until both show it, then the cash
 * balance and the position through the API until they show it as a vendor sees it: the latency
 * ends there. Polling the API itself every few ms took the CPU it was measuring.
 */
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import pg from 'pg';
import Decimal from 'decimal.js';
import { MARKET_CONCURRENCY, resultOf, timeWindow, type LoadResult, type MarketLoad, type Timing } from './load';

/** Until the fill must be applied in both, or the order counts as an error. */
const SETTLE_TIMEOUT_MS = 30_000;
const POLL_MS = 5;
const QUANTITY = '1';
const MARKET_BUY = { side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: QUANTITY };
const POSITION = 'SELECT quantity::text FROM positions WHERE account_id = $1 AND symbol = $2';
const TERMINAL = new Set(['FILLED', 'CANCELLED', 'EXPIRED', 'REJECTED']);

interface Account {
  token: string;
  id: string;
  /** The position's quantity and the balance as the last settled order left them. */
  quantity: Decimal;
  cash: Decimal;
  held: Decimal;
  broken: boolean;
}

/** Each order's terminal status from the event stream, whether it comes before or after its waiter. */
class Terminal {
  private readonly seen = new Map<string, string>();
  private readonly waiting = new Map<string, (status: string) => void>();
  settle(orderId: string, status: string) {
    const waiter = this.waiting.get(orderId);
    if (!waiter) return void this.seen.set(orderId, status);
    this.waiting.delete(orderId);
    waiter(status);
  }
  wait(orderId: string, timeoutMs: number): Promise<string> {
    const status = this.seen.get(orderId);
    this.seen.delete(orderId);
    if (status) return Promise.resolve(status);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle(orderId, 'TIMEOUT'), timeoutMs);
      this.waiting.set(orderId, (s) => {
        clearTimeout(timer);
        resolve(s);
      });
    });
  }
}

const bearer = (account: Account) => ({ authorization: `Bearer ${account.token}` });

/** Server-Sent Events: blocks separated by a blank line, `event:` and `data:` lines. */
export function parseSseBlocks(buffer: string): { events: Array<{ event: string; data: string }>; rest: string } {
  const blocks = buffer.split(/\r?\n\r?\n/);
  const rest = blocks.pop() ?? '';
  const events = blocks.flatMap((block) => {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    return data.length ? [{ event, data: data.join('\n') }] : [];
  });
  return { events, rest };
}

export async function marketLoad(spec: MarketLoad & Timing, onWindow: () => void): Promise<LoadResult> {
  const accounts: Account[] = spec.traders.flatMap((t) =>
    t.accounts.map((id) => ({ token: t.token, id, quantity: new Decimal(0), cash: new Decimal(0), held: new Decimal(0), broken: false })),
  );
  if (accounts.length < MARKET_CONCURRENCY)
    throw new Error(`market load: ${accounts.length} accounts for ${MARKET_CONCURRENCY} orders in flight`);
  const load = new MarketRun(spec, accounts.length);
  // One event stream per account, open before the first order and read until the load ends.
  const consumers = (await Promise.all(accounts.map((account) => load.openStream(account)))).map((open) => open.reading);
  for (const account of accounts) Object.assign(account, await load.read(account));
  const workers = Array.from({ length: MARKET_CONCURRENCY }, (_, w) =>
    load.worker(accounts.filter((_, i) => i % MARKET_CONCURRENCY === w)),
  );
  await timeWindow(spec, onWindow, load.state);
  await Promise.all(workers);
  load.gone.abort();
  await Promise.all(consumers);
  await load.close();
  return load.result();
}

/** One market load's connections, and what it has measured so far. */
class MarketRun {
  readonly state = { measuring: false, stopped: false };
  readonly gone = new AbortController();
  private readonly base: string;
  private readonly pool: Pool;
  private readonly streams: Pool;
  private readonly terminal = new Terminal();
  private readonly run = randomBytes(4).toString('hex');
  private readonly banking: pg.Pool;
  private readonly accountsDb: pg.Pool;
  private errors = 0;
  private sample: string | undefined;
  private readonly latencies: number[] = [];
  private placed = 0;

  constructor(
    private readonly spec: MarketLoad & Timing,
    accounts: number,
  ) {
    const api = new URL(spec.api);
    this.base = api.pathname.replace(/\/$/, '');
    this.pool = new Pool(api.origin, { connections: MARKET_CONCURRENCY * 2 });
    this.streams = new Pool(api.origin, { connections: accounts, bodyTimeout: 0 });
    setMaxListeners(accounts + 10, this.gone.signal); // one listener per event stream
    this.banking = new pg.Pool({ connectionString: spec.databases.banking, max: MARKET_CONCURRENCY });
    this.accountsDb = new pg.Pool({ connectionString: spec.databases.accounts, max: MARKET_CONCURRENCY });
    // An idle connection that breaks is a failure of the run, not a crash of the load generator.
    for (const db of [this.banking, this.accountsDb]) db.on('error', (err) => this.fail(`database connection: ${err.message}`));
  }

  fail(message: string): void {
    this.sample ??= message;
    this.errors++;
  }

  private async get(account: Account, path: string) {
    const res = await this.pool.request({ path: `${this.base}${path}`, method: 'GET', headers: bearer(account) });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? (JSON.parse(text) as Record<string, string>) : {} };
  }

  /** The account's position and cash balance as a vendor reads them. */
  async read(account: Account) {
    const [position, balance] = await Promise.all([
      this.get(account, `/accounts/${account.id}/position?symbol=${this.spec.symbol}`),
      this.get(account, `/banking/${account.id}/balance/USD`),
    ]);
    if (position.status !== 200 && position.status !== 404) throw new Error(`GET position answered ${position.status}`);
    if (balance.status !== 200) throw new Error(`GET balance answered ${balance.status}`);
    return {
      quantity: new Decimal(position.status === 200 ? position.body['quantity']! : 0),
      cash: new Decimal(balance.body['cash']!),
      held: new Decimal(balance.body['held']!),
    };
  }

  /** Banking applied the order's close (its hold captured or released) and accounts its fill. */
  private async appliedInBoth(account: Account, orderId: string, quantity: Decimal) {
    const [hold, position] = await Promise.all([
      this.banking.query<{ state: string }>('SELECT state FROM holds WHERE order_id = $1', [orderId]),
      this.accountsDb.query<{ quantity: string }>(POSITION, [account.id, this.spec.symbol]),
    ]);
    const state = hold.rows[0]?.state;
    return state !== undefined && state !== 'HELD' && new Decimal(position.rows[0]?.quantity ?? 0).equals(quantity);
  }

  /** The account's order event stream, open; `reading` settles each order's terminal status until the load ends (in an object, not awaited). */
  async openStream(account: Account): Promise<{ reading: Promise<void> }> {
    const res = await this.streams.request({
      path: `${this.base}/oms/${account.id}/events`,
      method: 'GET',
      headers: { ...bearer(account), accept: 'text/event-stream' },
      signal: this.gone.signal,
    });
    if (res.statusCode !== 200) throw new Error(`GET /oms/${account.id}/events answered ${res.statusCode}: ${await res.body.text()}`);
    const consume = async () => {
      let buffer = '';
      for await (const chunk of res.body) {
        const parsed = parseSseBlocks(buffer + (chunk as Buffer).toString('utf8'));
        buffer = parsed.rest;
        for (const { event, data } of parsed.events) {
          const order = event === 'order' ? (JSON.parse(data) as { id: string; status: string }) : undefined;
          if (order && TERMINAL.has(order.status)) this.terminal.settle(order.id, order.status);
        }
      }
    };
    const reading = consume().catch((err: unknown) => {
      if (!this.gone.signal.aborted) this.fail(`event stream of ${account.id}: ${(err as Error).message}`);
    });
    return { reading };
  }

  /** One order: placed, filled on the stream, applied in both databases, then visible through the API. Its latency, or a failure. */
  private async order(account: Account, n: number): Promise<number | string> {
    const id = `bench-mkt-${this.run}-${n}`;
    const started = performance.now();
    const res = await this.pool.request({
      path: `${this.base}/oms/order`,
      method: 'POST',
      headers: { ...bearer(account), 'content-type': 'application/json', 'idempotency-key': id },
      body: JSON.stringify({ accountId: account.id, symbol: this.spec.symbol, ...MARKET_BUY, clientOrderId: id }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 201) return `POST /oms/order answered ${res.statusCode}: ${text.slice(0, 200)}`;
    const orderId = (JSON.parse(text) as { id: string }).id;
    const status = await this.terminal.wait(orderId, SETTLE_TIMEOUT_MS);
    if (status !== 'FILLED') return `market order ${orderId} ended ${status}`;
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    const quantity = account.quantity.plus(QUANTITY);
    while (!(await this.appliedInBoth(account, orderId, quantity))) {
      if (Date.now() > deadline) return `order ${orderId} filled but not applied in banking and accounts`;
      await sleep(POLL_MS);
    }
    for (;;) {
      const now = await this.read(account);
      if (now.quantity.equals(quantity) && now.held.equals(account.held) && now.cash.lessThan(account.cash)) {
        account.quantity = now.quantity;
        account.cash = now.cash;
        return performance.now() - started;
      }
      if (Date.now() > deadline)
        return `order ${orderId} filled but not applied: position ${now.quantity} (want ${quantity}), held ${now.held} (want ${account.held}), cash ${now.cash} (was ${account.cash})`;
      await sleep(POLL_MS);
    }
  }

  /** One order in flight at a time, over `mine` in turn, until the load stops. */
  async worker(mine: Account[]): Promise<void> {
    for (let turn = 0; !this.state.stopped; turn++) {
      const live = mine.filter((a) => !a.broken);
      const account = live[turn % live.length];
      if (!account) return;
      const outcome = await this.order(account, this.placed++).catch((err: unknown) => `error: ${(err as Error).message}`);
      if (typeof outcome === 'string') {
        // Its state is no longer known (an order may still hold cash): the account leaves the load.
        account.broken = true;
        this.fail(outcome);
      } else if (this.state.measuring && !this.state.stopped) this.latencies.push(outcome);
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.close(), this.streams.destroy(), this.banking.end(), this.accountsDb.end()]);
  }

  result(): LoadResult {
    return resultOf(this.latencies, this.latencies.length + this.errors, this.errors, this.spec.seconds, this.sample);
  }
}
