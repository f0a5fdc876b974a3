import { EntitySchema } from 'typeorm';

/** How many US dollars one unit of `currency` buys; USD itself is 1. */
export interface FxRate {
  currency: string;
  usdRate: string;
}

export const FxRateEntity = new EntitySchema<FxRate>({
  name: 'FxRate',
  tableName: 'fx_rates',
  columns: {
    currency: { type: 'char', length: 3, primary: true },
    usdRate: { type: 'numeric', precision: 24, scale: 12, name: 'usd_rate' },
  },
});
