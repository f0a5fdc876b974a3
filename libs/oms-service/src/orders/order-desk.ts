import type { DataSource } from 'typeorm';
import type { Claims } from '@trading/auth';
import type { AccountsDirectory, OwnedAccount } from '@trading/accounts-directory';
import { AppError } from '@trading/errors';
import type { Logger } from '@trading/logging';
import type { InstrumentsService } from '../instruments/instruments.service';
import type { TradingHours } from '../market/trading-hours';
import type { BankingClient } from './clients';
import { orderIdempotency } from './order-idempotency';
import type { OrderInserts } from './order-insert';
import { orderById, presentOrder, type OrderRow, type OrderView } from './order-store';
import type { ReservationTerms } from './reservation';

/**
 * The order desk: what every order use case (placing, replacing, closing, cancelling, the
 * what-if) works with, and the steps they share: finding the caller's account, answering a
 * repeated Idempotency-Key, and answering an order.
 */

export interface OrdersOptions {
  collar: string;
  /** The quoted bid-ask spread: market buys fill at the ask, so their hold is reckoned from it. */
  spread: string;
  commissionRate: string;
  /** Lowest commission of an order that trades, in the instrument's currency. */
  minimumCommission: string;
  /** Limit and stop prices within this fraction of the last price. */
  priceBand: string;
  /** Working orders one account may have at once. */
  maxOpenOrdersPerAccount: number;
  /** The most one order may be worth (quantity × limit, collar or last price), in the instrument's currency. */
  maxOrderValue: string;
  /** Told when an order that must act at once starts working (the engine's wake). */
  actNow?: () => void;
}

export interface OrderDesk {
  dataSource: DataSource;
  instruments: InstrumentsService;
  accounts: AccountsDirectory;
  banking: BankingClient;
  hours: TradingHours;
  options: OrdersOptions;
  logger: Logger;
  /** Writes placed orders' rows. */
  inserts: OrderInserts;
  /** What a reservation is reckoned with, from the options. */
  terms: ReservationTerms;
}

/** What a reservation is reckoned with: the collar, the spread, the value cap and the commission schedule. */
export function reservationTerms(options: OrdersOptions): ReservationTerms {
  return {
    collar: options.collar,
    spread: options.spread,
    maxOrderValue: options.maxOrderValue,
    schedule: { rate: options.commissionRate, minimum: options.minimumCommission },
  };
}

/** The caller's account (a sell's comes with its holding in `symbol`); anyone else's, or none, is a 404. */
export async function ownedAccount(
  desk: OrderDesk,
  accountId: string,
  claims: Claims,
  requestId: string | undefined,
  symbol?: string,
): Promise<OwnedAccount> {
  const account = await desk.accounts.find(accountId, claims, { symbol, requestId });
  if (!account) throw new AppError('NOT_FOUND', 'Account not found', { field: 'accountId' });
  return account;
}

/** Only an ACTIVE account trades. */
export function checkCanTrade(account: OwnedAccount): OwnedAccount {
  if (account.status !== 'ACTIVE')
    throw new AppError('UNPROCESSABLE', `The account is ${account.status}: it cannot trade`, { field: 'accountId' });
  return account;
}

/** The order an Idempotency-Key already placed with this request, or null (a different request under it is a 422). */
export async function earlierOrder(desk: OrderDesk, userId: string, key: string, hash: string): Promise<OrderRow | null> {
  const orderId = await orderIdempotency.earlier(desk.dataSource, userId, key, hash);
  if (!orderId) return null;
  return orderById(desk.dataSource, orderId);
}

/** A rejected order is answered with a 422 naming the quantity; others as they are. */
export function answerOrder(order: OrderRow): OrderView {
  if (order.status === 'REJECTED')
    throw new AppError('UNPROCESSABLE', `Order ${order.id} rejected: ${order.status_reason ?? 'refused'}`, { field: 'quantity' });
  return presentOrder(order);
}
