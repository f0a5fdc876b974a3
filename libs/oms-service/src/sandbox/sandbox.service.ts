import Decimal from 'decimal.js';
import type { DataSource, EntityManager } from 'typeorm';
import { assertSandboxToken, type Claims } from '@trading/auth';
import type { AccountsDirectory } from '@trading/accounts-directory';
import { AppError, errors, parseUuid } from '@trading/errors';
import { DECIMAL_SYNTAX } from '@trading/money';
import { bidAsk } from '../market-data/quote';
import { expireOrder, type ExecutionEngine } from '../orders/engine';
import { marketableAt } from '../orders/fills';
import { floorToLot } from '../orders/order-rules';
import { closeOrder, orderById, presentOrder, type OrderRow, type OrderView } from '../orders/order-store';

/** What a sandbox fill asks for; each part optional (the whole remainder, at the order's own price). */
export interface SandboxFillInput {
  quantity?: unknown;
  price?: unknown;
}

/** The instrument's terms a fill is checked against. */
interface InstrumentTerms {
  last_price: string;
  tick_size: string;
  lot_size: string;
}

const SANDBOX_REJECT_REASON = 'Rejected by the sandbox';
const REASON_SYNTAX = /^[^\p{Cc}]{1,200}$/u;

/**
 * The DEV sandbox: a vendor drives its own working orders to the outcomes the paper market
 * would take its time over (a partial or full fill at a price of its choosing, a rejection, an
 * expiry), to see what its app does with each. Fills go through the engine's own fill and closes
 * through the engine's close, so trades, events, holds and settlement are those of real ones; the
 * market (quotes, last price) is not moved. Only DEV tokens, only the caller's own orders.
 */
export class OrderSandbox {
  constructor(
    private readonly dataSource: DataSource,
    private readonly accounts: AccountsDirectory,
    /** The instance's engine (made once the database is open). */
    private readonly engine: () => ExecutionEngine | undefined,
    private readonly spread: string,
  ) {}

  async fill(claims: Claims, orderIdInput: unknown, input: SandboxFillInput, requestId?: string): Promise<OrderView> {
    const orderId = await this.ownOrder(claims, orderIdInput, requestId);
    const quantityAsked = optionalDecimal(input.quantity, 'quantity');
    const priceAsked = optionalDecimal(input.price, 'price');
    const engine = this.engine();
    if (!engine) throw errors.unavailable('The execution engine is starting; try again in a moment');
    const row = await this.dataSource.transaction(async (tx) => {
      const order = await lockWorking(tx, orderId);
      const terms = await instrumentTerms(tx, order.symbol);
      const price = fillPrice(order, terms, this.spread, priceAsked);
      const quantity = fillQuantity(order, terms, quantityAsked);
      const filled = await engine.fillAt(tx, order, quantity, price);
      if (!filled) throw new AppError('CONFLICT', 'Another leg of this order group is busy; try again in a moment', { field: 'orderId' });
      // An IOC's remainder may have been cancelled after the trade: answer the order as it is now.
      return (await orderById(tx, orderId))!;
    });
    engine.filledOutsidePass();
    return presentOrder(row);
  }

  async reject(claims: Claims, orderIdInput: unknown, reasonInput: unknown, requestId?: string): Promise<OrderView> {
    const orderId = await this.ownOrder(claims, orderIdInput, requestId);
    const reason = parseReason(reasonInput);
    const row = await this.dataSource.transaction(async (tx) => closeOrder(tx, await lockWorking(tx, orderId), 'REJECTED', reason));
    return presentOrder(row);
  }

  async expire(claims: Claims, orderIdInput: unknown, requestId?: string): Promise<OrderView> {
    const orderId = await this.ownOrder(claims, orderIdInput, requestId);
    const row = await this.dataSource.transaction(async (tx) => expireOrder(tx, await lockWorking(tx, orderId)));
    return presentOrder(row);
  }

  /** A DEV token's own order, in an account the token reaches; anyone else's, or none, is a 404. */
  private async ownOrder(claims: Claims, orderIdInput: unknown, requestId: string | undefined): Promise<string> {
    assertSandboxToken(claims);
    const orderId = parseUuid(orderIdInput, 'orderId');
    const order = await orderById(this.dataSource, orderId);
    const notFound = () => new AppError('NOT_FOUND', 'Order not found', { field: 'orderId' });
    if (!order || (order.user_id !== null && order.user_id !== claims.sub)) throw notFound();
    if (!(await this.accounts.find(order.account_id, claims, { requestId }))) throw notFound();
    return orderId;
  }
}

/** The order under its row lock, if it is working; otherwise a 409 saying what it is. */
async function lockWorking(tx: EntityManager, orderId: string): Promise<OrderRow> {
  const [order]: OrderRow[] = await tx.query('SELECT * FROM orders WHERE id = $1 FOR UPDATE', [orderId]);
  const conflict = (message: string) => new AppError('CONFLICT', message, { field: 'orderId' });
  switch (order!.status) {
    case 'NEW':
    case 'PARTIALLY_FILLED':
      if (order!.replaced_by_order_id) throw conflict(`The order is being replaced by ${order!.replaced_by_order_id}`);
      return order!;
    case 'FILLED':
      throw conflict('The order is already filled');
    case 'ACCEPTED':
      throw conflict('The order is still being accepted; try again in a moment');
    case 'PENDING':
      throw conflict('The order waits for its parent order to fill; it is not working yet');
    default:
      throw conflict(`The order is already closed (${order!.status})`);
  }
}

async function instrumentTerms(tx: EntityManager, symbol: string): Promise<InstrumentTerms> {
  const [terms]: InstrumentTerms[] = await tx.query(
    'SELECT last_price::text AS last_price, tick_size::text AS tick_size, lot_size::text AS lot_size FROM instruments WHERE symbol = $1',
    [symbol],
  );
  if (!terms) throw errors.unavailable(`The instrument ${symbol} is not listed now`);
  return terms;
}

/**
 * The price asked, or the order's own: its limit, else the quote the engine would fill it at
 * (a buy the ask, a sell the bid). On the tick, positive, and one the order allows (a buy at or
 * below its limit and collar, a sell at or above its limit).
 */
function fillPrice(order: OrderRow, terms: InstrumentTerms, spread: string, asked: Decimal | undefined): Decimal {
  const quote = bidAsk(terms.last_price, terms.tick_size, spread);
  const price = asked ?? (order.limit_price !== null ? new Decimal(order.limit_price) : order.side === 'BUY' ? quote.ask : quote.bid);
  if (price.lte(0)) throw new AppError('BAD_USER_INPUT', 'price must be positive', { field: 'price' });
  if (!price.mod(terms.tick_size).isZero())
    throw new AppError('UNPROCESSABLE', `price must be on the instrument's tick (${terms.tick_size})`, { field: 'price' });
  if (!marketableAt(order, price)) {
    const bound = order.side === 'BUY' ? 'at or below its limit (and collar)' : 'at or above its limit';
    throw new AppError('UNPROCESSABLE', `This ${order.side} order fills only ${bound}; ${price.toFixed()} is not`, { field: 'price' });
  }
  return price;
}

/** The quantity asked, or the whole remainder: positive, at most the remainder, in whole lots unless it is the remainder. */
function fillQuantity(order: OrderRow, terms: InstrumentTerms, asked: Decimal | undefined): Decimal {
  const remaining = new Decimal(order.quantity).minus(order.filled_quantity);
  const quantity = asked ?? remaining;
  if (quantity.lte(0)) throw new AppError('BAD_USER_INPUT', 'quantity must be positive', { field: 'quantity' });
  if (quantity.gt(remaining))
    throw new AppError('UNPROCESSABLE', `quantity may be at most the remaining ${remaining.toFixed()}`, { field: 'quantity' });
  if (!quantity.eq(remaining) && !floorToLot(quantity, terms.lot_size).eq(quantity))
    throw new AppError('UNPROCESSABLE', `quantity must be a whole number of lots (${terms.lot_size}) or the whole remainder`, {
      field: 'quantity',
    });
  return quantity;
}

function optionalDecimal(value: unknown, field: string): Decimal | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !DECIMAL_SYNTAX.test(value))
    throw new AppError('BAD_USER_INPUT', `${field} must be a decimal string, e.g. "10"`, { field });
  return new Decimal(value);
}

function parseReason(value: unknown): string {
  if (value === undefined || value === null) return SANDBOX_REJECT_REASON;
  if (typeof value !== 'string' || !REASON_SYNTAX.test(value))
    throw new AppError('BAD_USER_INPUT', 'reason must be 1 to 200 characters without control characters', { field: 'reason' });
  return value;
}
