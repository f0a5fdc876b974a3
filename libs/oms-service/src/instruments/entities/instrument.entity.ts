/** An instrument of the paper market (the instruments table, read and written with SQL). */
export interface Instrument {
  symbol: string;
  name: string;
  currency: string;
  tickSize: string;
  lotSize: string;
  /** Last price of the paper market. */
  lastPrice: string;
  /** The previous session's closing price, for day change. */
  previousClose: string;
  tradable: boolean;
  /** Smallest and largest quantity one order may have (defaults 1 and 100000). */
  minQuantity?: string;
  maxQuantity?: string;
}
