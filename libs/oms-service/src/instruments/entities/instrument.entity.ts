import { EntitySchema } from 'typeorm';

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

export const InstrumentEntity = new EntitySchema<Instrument>({
  name: 'Instrument',
  tableName: 'instruments',
  columns: {
    symbol: { type: 'text', primary: true },
    name: { type: 'text' },
    currency: { type: 'char', length: 3 },
    tickSize: { type: 'numeric', precision: 20, scale: 8, name: 'tick_size' },
    lotSize: { type: 'numeric', precision: 20, scale: 8, name: 'lot_size' },
    lastPrice: { type: 'numeric', precision: 20, scale: 8, name: 'last_price' },
    previousClose: { type: 'numeric', precision: 20, scale: 8, name: 'previous_close' },
    tradable: { type: 'boolean', default: true },
    minQuantity: { type: 'numeric', precision: 20, scale: 8, name: 'min_quantity', default: 1 },
    maxQuantity: { type: 'numeric', precision: 20, scale: 8, name: 'max_quantity', default: 100000 },
  },
});
