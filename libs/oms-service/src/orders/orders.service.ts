import type { DataSource } from 'typeorm';
import type { Claims } from '@trading/auth';
import type { AccountsDirectory } from '@trading/accounts-directory';
import type { Logger } from '@trading/logging';
import type { InstrumentsService } from '../instruments/instruments.service';
import type { TradingHours } from '../market/trading-hours';
import { cancelByClientOrderId, cancelOrder } from './cancel-order';
import type { BankingClient } from './clients';
import { closeAllPositions, closePosition } from './closing-positions';
import { reservationTerms, type OrderDesk, type OrdersOptions } from './order-desk';
import { OrderInserts } from './order-insert';
import type { OrderView } from './order-store';
import { placeOrder } from './place-order';
import { replaceOrder } from './replace-order';
import { tradingTerms } from './trading-terms';
import { whatIfOrder } from './what-if';

export { orderIdempotency } from './order-idempotency';
export type { OrdersOptions } from './order-desk';

/**
 * The order use cases the resolvers call, each a module of its own: placing (place-order.ts:
 * parse, rules, reserve, record, hold, schedule), the what-if (what-if.ts), replacing
 * (replace-order.ts), closing positions (closing-positions.ts), cancelling (cancel-order.ts) and
 * the trading terms (trading-terms.ts). This class only holds what they share (the desk).
 */
export class OrdersService {
  private readonly desk: OrderDesk;

  constructor(
    dataSource: DataSource,
    instruments: InstrumentsService,
    accounts: AccountsDirectory,
    banking: BankingClient,
    hours: TradingHours,
    options: OrdersOptions,
    logger: Logger,
  ) {
    const inserts = new OrderInserts(dataSource, options);
    this.desk = { dataSource, instruments, accounts, banking, hours, options, logger, inserts, terms: reservationTerms(options) };
  }

  rules(accountId: string, symbol: unknown) {
    return tradingTerms(this.desk, accountId, symbol);
  }

  whatIf(claims: Claims, input: Record<string, unknown>, requestId?: string) {
    return whatIfOrder(this.desk, claims, input, requestId);
  }

  place(claims: Claims, input: Record<string, unknown>, idempotencyKey: unknown, requestId?: string): Promise<OrderView> {
    return placeOrder(this.desk, claims, input, idempotencyKey, requestId);
  }

  replace(claims: Claims, input: Record<string, unknown>, idempotencyKey: unknown, requestId?: string): Promise<OrderView> {
    return replaceOrder(this.desk, claims, input, idempotencyKey, requestId);
  }

  closePosition(claims: Claims, input: Record<string, unknown>, idempotencyKey: unknown, requestId?: string): Promise<OrderView> {
    return closePosition(this.desk, claims, input, idempotencyKey, requestId);
  }

  closeAllPositions(claims: Claims, accountId: unknown, idempotencyKey: unknown, requestId?: string): Promise<OrderView[]> {
    return closeAllPositions(this.desk, claims, accountId, idempotencyKey, requestId);
  }

  cancel(claims: Claims, orderId: unknown, requestId?: string): Promise<OrderView> {
    return cancelOrder(this.desk, claims, orderId, requestId);
  }

  cancelByClientOrderId(claims: Claims, accountId: unknown, clientOrderId: unknown, requestId?: string): Promise<OrderView> {
    return cancelByClientOrderId(this.desk, claims, accountId, clientOrderId, requestId);
  }
}
