/**
 * The market-order load (in the load generator's process): market buys placed through the facade,
 * each followed to the end of settlement. The order event stream (GET /v1/oms/{accountId}/events,
 * one per account) says when the OMS filled an order. Then banking's and accounts' own rows are
 * read by primary key every few ms (the order's hold no longer HELD, the position grown: a read
 * that costs PostgreSQL microseconds), and once both show it, the account's cash balance (banking:
 * the hold back where it was, the cash lower) and its position (accounts: the quantity grown)
 * through the API, until they show it as a vendor sees it: the latency ends there. Polling the
 * API itself every few ms would be up to 32 REST reads per 5 ms, CPU taken from what is measured.
 * One order in flight per account, so each check is exact even beside other holds (resting limit
 * orders of the orders path).
 */
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { Pool } from 'undici';
import pg from 'pg';
import Decimal from 'decimal.js';
import { percentile, type LoadResult, type MarketLoad, type Timing } from './load';

/** Until the fill must be applied in both, or the order counts as an error. */
const SETTLE_TIMEOUT_MS = 30_000;
const POLL_MS = 5;

interface Account {
  token: string;
  id: string;
  /** The position's quantity and the balance as the last settled order left them. */
  quantity: Decimal;
  cash: Decimal;
  held: Decimal;
  broken: boolean;
}

/** Where an order stands on the event stream: its terminal status, or a waiter for it. */
class Terminal {
  private readonly seen = new Map<string, string>();
  private readonly waiting = new Map<string, (status: string) => void>();
  settle(orderId: string, status: string) {
    const waiter = this.waiting.get(orderId);
    if (waiter) {
      this.waiting.delete(orderId);
      waiter(status);
    } else this.seen.set(orderId, status);
  }
  wait(orderId: string, timeoutMs: number): Promise<string> {
    const status = this.seen.get(orderId);
    if (status) {
      this.seen.delete(orderId);
      return Promise.resolve(status);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(orderId);
        resolve('TIMEOUT');
      }, timeoutMs);
      this.waiting.set(orderId, (s) => {
        clearTimeout(timer);
        resolve(s);
      });
    });
  }
}

const TERMINAL = new Set(['FILLED', 'CANCELLED', 'EXPIRED', 'REJECTED']);

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
  if (accounts.length < spec.concurrency)
    throw new Error(`market load: ${accounts.length} accounts for ${spec.concurrency} orders in flight`);
  const load = new MarketRun(spec, accounts.length);
  // One event stream per account, open before the first order (each read on until the load ends).
  const consumers = (await Promise.all(accounts.map((account) => load.openStream(account)))).map((o) => o.reading);
  for (const account of accounts) Object.assign(account, await load.read(account));

  const workers = Array.from({ length: spec.concurrency }, (_, w) => load.worker(accounts.filter((_, i) => i % spec.concurrency === w)));
  await sleep(spec.warmupSeconds * 1000);
  load.measuring = true;
  onWindow();
  await sleep(spec.seconds * 1000);
  load.stopped = true;
  await Promise.all(workers);
  load.gone.abort();
  await Promise.all(consumers);
  await load.close();
  return load.result();
}

/** One market load's connections, and what it has measured so far. */
class MarketRun {
  measuring = false;
  stopped = false;
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
    this.pool = new Pool(api.origin, { connections: spec.concurrency * 2 });
    this.streams = new Pool(api.origin, { connections: accounts, bodyTimeout: 0 });
    // One listener per event stream.
    setMaxListeners(accounts + 10, this.gone.signal);
    this.banking = new pg.Pool({ connectionString: spec.databases.banking, max: spec.concurrency });
    this.accountsDb = new pg.Pool({ connectionString: spec.databases.accounts, max: spec.concurrency });
    // An idle connection that breaks is a failure of the run, not a crash of the load generator.
    for (const db of [this.banking, this.accountsDb]) db.on('error', (err) => this.fail(`database connection: ${err.message}`));
  }

  fail(message: string): void {
    this.sample ??= message;
    this.errors++;
  }

  private async get(account: Account, path: string) {
    const res = await this.pool.request({
      path: `${this.base}${path}`,
      method: 'GET',
      headers: { authorization: `Bearer ${account.token}` },
    });
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
      this.accountsDb.query<{ quantity: string }>('SELECT quantity::text FROM positions WHERE account_id = $1 AND symbol = $2', [
        account.id,
        this.spec.symbol,
      ]),
    ]);
    return (
      hold.rows[0]?.state !== undefined && hold.rows[0].state !== 'HELD' && new Decimal(position.rows[0]?.quantity ?? 0).equals(quantity)
    );
  }

  /** The account's order event stream, open; `reading` settles each order's terminal status until the load ends. */
  async openStream(account: Account): Promise<{ reading: Promise<void> }> {
    const res = await this.streams.request({
      path: `${this.base}/oms/${account.id}/events`,
      method: 'GET',
      headers: { authorization: `Bearer ${account.token}`, accept: 'text/event-stream' },
      signal: this.gone.signal,
    });
    if (res.statusCode !== 200) throw new Error(`GET /oms/${account.id}/events answered ${res.statusCode}: ${await res.body.text()}`);
    const consume = async () => {
      let buffer = '';
      for await (const chunk of res.body) {
        const parsed = parseSseBlocks(buffer + (chunk as Buffer).toString('utf8'));
        buffer = parsed.rest;
        for (const { event, data } of parsed.events) {
          if (event !== 'order') continue;
          const order = JSON.parse(data) as { id: string; status: string };
          if (TERMINAL.has(order.status)) this.terminal.settle(order.id, order.status);
        }
      }
    };
    const reading = consume().catch((err: unknown) => {
      if (!this.gone.signal.aborted) this.fail(`event stream of ${account.id}: ${(err as Error).message}`);
    });
    return { reading };
  }

  /** One order: placed, filled on the stream, then applied in both. Its latency, or a failure. */
  private async order(account: Account, n: number): Promise<number | string> {
    const id = `bench-mkt-${this.run}-${n}`;
    const started = performance.now();
    const res = await this.pool.request({
      path: `${this.base}/oms/order`,
      method: 'POST',
      headers: { authorization: `Bearer ${account.token}`, 'content-type': 'application/json', 'idempotency-key': id },
      body: JSON.stringify({
        accountId: account.id,
        symbol: this.spec.symbol,
        side: 'BUY',
        type: 'MARKET',
        timeInForce: 'DAY',
        quantity: this.spec.quantity,
        clientOrderId: id,
      }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 201) return `POST /oms/order answered ${res.statusCode}: ${text.slice(0, 200)}`;
    const orderId = (JSON.parse(text) as { id: string }).id;
    const status = await this.terminal.wait(orderId, SETTLE_TIMEOUT_MS);
    if (status !== 'FILLED') return `market order ${orderId} ended ${status}`;
    return this.settled(account, orderId, started);
  }

  /** Waits for a filled order to be applied in both databases, then visible through the API: its latency from `started`, or a failure. */
  private async settled(account: Account, orderId: string, started: number): Promise<number | string> {
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    const quantity = account.quantity.plus(this.spec.quantity);
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
    for (let turn = 0; !this.stopped; turn++) {
      const live = mine.filter((a) => !a.broken);
      const account = live[turn % live.length];
      if (!account) return;
      const outcome = await this.order(account, this.placed++).catch((err: unknown) => `error: ${(err as Error).message}`);
      if (typeof outcome === 'string') {
        // Its state is no longer known (an order may still hold cash): the account leaves the load.
        account.broken = true;
        this.fail(outcome);
      } else if (this.measuring && !this.stopped) this.latencies.push(outcome);
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.close(), this.streams.destroy(), this.banking.end(), this.accountsDb.end()]);
  }

  result(): LoadResult {
    const latencies = this.latencies.sort((a, b) => a - b);
    return {
      total: latencies.length + this.errors,
      errors: this.errors,
      perSecond: latencies.length / this.spec.seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      ...(this.sample ? { sample: this.sample } : {}),
    };
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
