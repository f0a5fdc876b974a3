import type { DataSource, EntityManager } from 'typeorm';
import type { DeliveredEvent, TradeExecuted } from '@trading/events';
import { canonical, D } from '@trading/money';

/**
 * Applies fills to positions exactly once per event id, in one transaction with
 * the event's record:
 *   buy   quantity += q; average cost = (old cost + gross + commission) / new quantity
 *         (commissions are part of the cost basis);
 *   sell  quantity −= q; realised P&L += gross − commission − q × average cost; the average
 *         cost of what remains is unchanged.
 * A holding sold down to zero stays (quantity 0), keeping its realised P&L.
 */
export class PositionSettlementService {
  constructor(private readonly dataSource: DataSource) {}

  async apply(event: DeliveredEvent): Promise<boolean> {
    if (event.type !== 'trade.executed') return false;
    return this.dataSource.transaction(async (tx) => {
      const fresh = await tx.query(
        'INSERT INTO settlement_events (event_id, type) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING RETURNING event_id',
        [event.eventId, event.type],
      );
      if (!fresh.length) return false;
      await this.trade(tx, (event.payload as unknown as TradeExecuted).trade);
      return true;
    });
  }

  private async trade(tx: EntityManager, t: TradeExecuted['trade']): Promise<void> {
    const q = new D(t.quantity);
    await tx.query(
      `INSERT INTO positions (account_id, symbol, quantity, average_cost, currency, realized_pnl) VALUES ($1, $2, 0, 0, $3, 0)
       ON CONFLICT (account_id, symbol) DO NOTHING`,
      [t.accountId, t.symbol, t.currency],
    );
    const [p] = await tx.query(
      'SELECT quantity, average_cost, realized_pnl FROM positions WHERE account_id = $1 AND symbol = $2 FOR UPDATE',
      [t.accountId, t.symbol],
    );
    const quantity = new D(p.quantity);
    const average = new D(p.average_cost);
    let newQuantity: InstanceType<typeof D>;
    let newAverage = average;
    let realized = new D(p.realized_pnl);
    if (t.side === 'BUY') {
      newQuantity = quantity.plus(q);
      const cost = quantity.times(average).plus(t.grossAmount).plus(t.commission);
      newAverage = newQuantity.isZero() ? new D(0) : cost.div(newQuantity).toDecimalPlaces(8);
    } else {
      newQuantity = quantity.minus(q);
      realized = realized.plus(new D(t.grossAmount).minus(t.commission).minus(q.times(average))).toDecimalPlaces(8);
    }
    await tx.query(
      'UPDATE positions SET quantity = $3, average_cost = $4, realized_pnl = $5, updated_at = now() WHERE account_id = $1 AND symbol = $2',
      [t.accountId, t.symbol, newQuantity.toFixed(), newAverage.toFixed(), realized.toFixed()],
    );
    await tx.query(
      `INSERT INTO position_trade_totals (account_id, symbol, traded_quantity, trade_count) VALUES ($1, $2, $3, 1)
       ON CONFLICT (account_id, symbol) DO UPDATE SET traded_quantity = position_trade_totals.traded_quantity + $3, trade_count = position_trade_totals.trade_count + 1`,
      [t.accountId, t.symbol, (t.side === 'BUY' ? q : q.neg()).toFixed()],
    );
  }

  /** The holding and the part of it trades made, read in one statement (one snapshot). */
  async settlement(accountId: string, symbol: string): Promise<{ symbol: string; quantity: string; tradedQuantity: string }> {
    const [row] = await this.dataSource.query(
      `SELECT coalesce((SELECT quantity FROM positions WHERE account_id = $1 AND symbol = $2), 0)::text AS quantity,
              coalesce((SELECT traded_quantity FROM position_trade_totals WHERE account_id = $1 AND symbol = $2), 0)::text AS traded`,
      [accountId, symbol],
    );
    return { symbol, quantity: canonical(row.quantity), tradedQuantity: canonical(row.traded) };
  }
}
