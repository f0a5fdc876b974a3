/**
 * The market-order load (in the load generator's process): market buys of one share placed through
 * the facade, MARKET_CONCURRENCY at a time and one per account, so each check is exact even beside
 * other holds. The account's order event stream says when the OMS filled an order; then banking's
 * hold row and accounts' position row are read by primary key until both show it, then the cash
 * balance and the position through the API until they show it as a vendor sees it: the latency
 * ends there. Polling the API itself every few ms would take the CPU it measures.
 */
import { randomBytes } from 'node:crypto';
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
const bearer = (account: Account) => ({ authorization: `Bearer ${account.token}` });

/** An account of the load, with its position's quantity and balance as the last settled order left them. */
type Account = { token: string; id: string; quantity: Decimal; cash: Decimal; held: Decimal; broken: boolean };

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

/** Polls `check` every POLL_MS until it answers true; false once `deadline` has passed. */
async function until(check: () => Promise<boolean>, deadline: number): Promise<boolean> {
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await sleep(POLL_MS);
  }
  return true;
}

export async function marketLoad(spec: MarketLoad & Timing, onWindow: () => void): Promise<LoadResult> {
  const zero = new Decimal(0);
  const accounts: Account[] = spec.traders.flatMap((t) =>
    t.accounts.map((id) => ({ token: t.token, id, quantity: zero, cash: zero, held: zero, broken: false })),
  );
  if (accounts.length < MARKET_CONCURRENCY)
    throw new Error(`market load: ${accounts.length} accounts for ${MARKET_CONCURRENCY} orders in flight`);
  const load = new MarketRun(spec, accounts.length);
  // One event stream per account, open before the first order and read until the load ends.
  await Promise.all(accounts.map((account) => load.openStream(account)));
  for (const account of accounts) Object.assign(account, await load.read(account));
  const workers = Array.from({ length: MARKET_CONCURRENCY }, (_, w) =>
    load.worker(accounts.filter((_, i) => i % MARKET_CONCURRENCY === w)),
  );
  await timeWindow(spec, onWindow, load.state);
  await Promise.all(workers);
  return load.close();
}

/** One market load's connections, and what it has measured so far. */
class MarketRun {
  readonly state = { measuring: false, stopped: false };
  private readonly base: string;
  private readonly pool: Pool;
  private readonly streams: Pool;
  private readonly reading: Promise<void>[] = [];
  /** Each order's terminal status from its event stream, whether it comes before or after its waiter. */
  private readonly ended = new Map<string, { status: Promise<string>; settle(status: string): void }>();
  private readonly run = randomBytes(4).toString('hex');
  private readonly db: { banking: pg.Pool; accounts: pg.Pool };
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
    const db = (url: string) => new pg.Pool({ connectionString: url, max: MARKET_CONCURRENCY });
    this.db = { banking: db(spec.databases.banking), accounts: db(spec.databases.accounts) };
    // An idle connection that breaks is a failure of the run, not a crash of the load generator.
    for (const pool of Object.values(this.db)) pool.on('error', (err) => this.fail(`database connection: ${err.message}`));
  }

  private fail(message: string): void {
    this.sample ??= message;
    this.errors++;
  }

  private endOf(orderId: string) {
    let ended = this.ended.get(orderId);
    if (!ended) {
      let settle!: (status: string) => void;
      ended = { status: new Promise<string>((resolve) => (settle = resolve)), settle };
      this.ended.set(orderId, ended);
    }
    return ended;
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
    const quantity = new Decimal(position.status === 200 ? position.body['quantity']! : 0);
    return { quantity, cash: new Decimal(balance.body['cash']!), held: new Decimal(balance.body['held']!) };
  }

  /** Banking applied the order's close (its hold captured or released) and accounts its fill. */
  private async appliedInBoth(account: Account, orderId: string, quantity: Decimal) {
    const [hold, position] = await Promise.all([
      this.db.banking.query<{ state: string }>('SELECT state FROM holds WHERE order_id = $1', [orderId]),
      this.db.accounts.query<{ quantity: string }>(POSITION, [account.id, this.spec.symbol]),
    ]);
    const state = hold.rows[0]?.state;
    return state !== undefined && state !== 'HELD' && new Decimal(position.rows[0]?.quantity ?? 0).equals(quantity);
  }

  /** Opens the account's order event stream, then reads each order's terminal status from it until the load ends. */
  async openStream(account: Account): Promise<void> {
    const res = await this.streams.request({
      path: `${this.base}/oms/${account.id}/events`,
      method: 'GET',
      headers: { ...bearer(account), accept: 'text/event-stream' },
    });
    if (res.statusCode !== 200) throw new Error(`GET /oms/${account.id}/events answered ${res.statusCode}: ${await res.body.text()}`);
    const consume = async () => {
      let buffer = '';
      for await (const chunk of res.body) {
        const parsed = parseSseBlocks(buffer + (chunk as Buffer).toString('utf8'));
        buffer = parsed.rest;
        for (const { event, data } of parsed.events) {
          const order = event === 'order' ? (JSON.parse(data) as { id: string; status: string }) : undefined;
          if (order && TERMINAL.has(order.status)) this.endOf(order.id).settle(order.status);
        }
      }
    };
    this.reading.push(
      consume().catch((err: unknown) => {
        if (!this.state.stopped) this.fail(`event stream of ${account.id}: ${(err as Error).message}`);
      }),
    );
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
    const ended = this.endOf(orderId);
    const timer = setTimeout(() => ended.settle('TIMEOUT'), SETTLE_TIMEOUT_MS);
    const status = await ended.status;
    clearTimeout(timer);
    this.ended.delete(orderId);
    if (status !== 'FILLED') return `market order ${orderId} ended ${status}`;
    const [deadline, quantity] = [Date.now() + SETTLE_TIMEOUT_MS, account.quantity.plus(QUANTITY)];
    if (!(await until(() => this.appliedInBoth(account, orderId, quantity), deadline)))
      return `order ${orderId} filled but not applied in banking and accounts`;
    let now = account as Pick<Account, 'quantity' | 'cash' | 'held'>;
    const shown = async () => {
      now = await this.read(account);
      return now.quantity.equals(quantity) && now.held.equals(account.held) && now.cash.lessThan(account.cash);
    };
    if (!(await until(shown, deadline)))
      return `order ${orderId} filled but not applied: position ${now.quantity} (want ${quantity}), held ${now.held} (want ${account.held}), cash ${now.cash} (was ${account.cash})`;
    [account.quantity, account.cash] = [now.quantity, now.cash];
    return performance.now() - started;
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

  /** Closes every connection, the event streams with them: the window's figures. */
  async close(): Promise<LoadResult> {
    await Promise.all([this.pool.close(), this.streams.destroy(), this.db.banking.end(), this.db.accounts.end()]);
    await Promise.all(this.reading);
    return resultOf(this.latencies, this.latencies.length + this.errors, this.errors, this.spec.seconds, this.sample);
  }
}
