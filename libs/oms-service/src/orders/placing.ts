import Decimal from 'decimal.js';
import type { DataSource, EntityManager } from 'typeorm';
import type { OwnedAccount } from '@trading/accounts-directory';
import { AppError } from '@trading/errors';
import { formatMoney } from '@trading/money';
import type { Instrument } from '../instruments/entities/instrument.entity';
import type { BankingClient } from './clients';
import { orderIdempotency } from './order-idempotency';
import type { KeyClaim, OrderInserts } from './order-insert';
import { announceWithLegs, recordLegs, rejectWithLegs, type CheckedLeg } from './order-legs';
import type { OrderClass, OrderRequest } from './order-rules';
import { closeOrder, orderById, startWorking, type OrderRow } from './order-store';
import type { Reservation } from './reservation';
import { insufficientPosition, sellable } from './sellable';

/** A checked order about to be recorded, with its legs and the key it is placed under. */
export interface Placement {
  userId: string;
  clientOrderId: string;
  request: OrderRequest;
  instrument: Instrument;
  account: OwnedAccount;
  reservation: Reservation;
  expiresAt: Date | null;
  orderClass: OrderClass;
  legs: readonly CheckedLeg[];
  claim: KeyClaim | undefined;
}

/**
 * Records a placement in the caller's transaction: the key's claim first (a concurrent duplicate
 * waits on it, then replays), the order and its legs, and a sell's holding checked under the
 * per-(account, symbol) lock. Buys (the order, an OCO's other leg, a child that buys) stay
 * ACCEPTED until banking holds their cash; a group with nothing to hold works at once.
 */
export async function recordPlacement(tx: EntityManager, inserts: OrderInserts, p: Placement): Promise<OrderRow | { replay: string }> {
  const { claim, request } = p;
  if (claim) {
    // The key's row is written first: a concurrent duplicate waits on it, then replays.
    if (!(await orderIdempotency.claim(tx, claim.owner, claim.key, claim.hash)).first) return { replay: claim.key };
  }
  const buy = request.side === 'BUY';
  // Every buy of the group (the order, an OCO's other leg, a child that buys) holds its cash before any of it works.
  const holds = buy || p.legs.some((l) => l.request.side === 'BUY');
  const order = await inserts.insert(tx, p.userId, p.clientOrderId, request, p.instrument, {
    reservation: buy ? p.reservation : null,
    status: holds ? 'ACCEPTED' : 'NEW',
    expiresAt: p.expiresAt,
    orderClass: p.orderClass,
  });
  if (!order)
    throw new AppError('CONFLICT', `clientOrderId ${p.clientOrderId} was already used for another order of this account`, {
      field: 'clientOrderId',
    });
  if (claim) await orderIdempotency.remember(tx, claim.owner, claim.key, order.id);
  await recordLegs(tx, inserts, order, p, p.legs);
  if (buy) return order;
  return checkSellHolding(tx, p, order, holds);
}

/** A sell's holding, under the per-(account, symbol) lock: short, the whole group is REJECTED; else, with nothing to hold, it works. */
async function checkSellHolding(tx: EntityManager, p: Placement, order: OrderRow, holds: boolean): Promise<OrderRow> {
  // An OCO's legs sell the same shares once: its group is counted once (sellable()).
  const available = await sellable(tx, p.account, p.request.symbol, order.id);
  if (new Decimal(p.request.quantity).gt(available)) {
    // The whole group is refused: an OCO's other leg (NEW) or a bracket's children must not work on their own.
    return rejectWithLegs(tx, order, insufficientPosition(available, p.request.symbol));
  }
  if (!holds) await announceWithLegs(tx, order); // a sell is NEW at once; a buy once banking holds its cash
  return order;
}

/** A buy's hold in banking, then NEW; a refusal rejects the order. */
export async function confirmHold(dataSource: DataSource, banking: BankingClient, order: OrderRow, userId: string): Promise<OrderRow> {
  try {
    await banking.placeHold(
      {
        orderId: order.id,
        accountId: order.account_id,
        currency: order.currency,
        amount: formatMoney(order.hold_amount!, order.currency),
      },
      userId,
    );
  } catch (err) {
    const refused = err instanceof AppError && err.code === 'UNPROCESSABLE';
    // Banking may or may not have made the hold before failing: give it back either way (idempotent).
    if (!refused && !(await banking.releaseHold(order.id, { userId, accountId: order.account_id }))) throw err; // the engine's sweep finishes it
    const rejected = await dataSource.transaction(async (tx) => {
      const [locked]: OrderRow[] = await tx.query("SELECT * FROM orders WHERE id = $1 AND status = 'ACCEPTED' FOR UPDATE", [order.id]);
      if (!locked) throw err;
      return closeOrder(tx, locked, 'REJECTED', refused ? (err as AppError).message : 'Banking could not reserve the cash');
    });
    if (!refused) throw err; // 503: the client may retry (a new clientOrderId or the same Idempotency-Key answers REJECTED)
    return rejected;
  }
  return (await startWorking(dataSource, order)) ?? (await orderById(dataSource, order.id))!;
}
