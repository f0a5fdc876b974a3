/** A holding in one instrument (the positions table, read and written with SQL); quantity, cost and P&L are exact decimals kept as strings. */
export interface Position {
  accountId: string;
  symbol: string;
  /** Negative for a short holding. */
  quantity: string;
  averageCost: string;
  currency: string;
  /** P&L booked by closing fills, in the position's currency. */
  realizedPnl: string;
  updatedAt: Date;
}
