import type { DataSource } from 'typeorm';
import type { Instrument } from './instruments/entities/instrument.entity';
import { FxRateEntity, type FxRate } from './market/entities/fx-rate.entity';

export interface OmsDemoData {
  instruments: Instrument[];
  /** US dollars per unit of each currency (USD is 1 already). */
  fxRates?: FxRate[];
}

/** Demo instruments with prices, and FX rates, for the all-in-one mode; existing rows are left as they are. */
export async function seedOmsDemo(dataSource: DataSource, data: OmsDemoData): Promise<void> {
  await dataSource.transaction(async (tx) => {
    for (const i of data.instruments)
      await tx.query(
        `INSERT INTO instruments (symbol, name, currency, tick_size, lot_size, last_price, previous_close, tradable, min_quantity, max_quantity)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (symbol) DO NOTHING`,
        [
          i.symbol,
          i.name,
          i.currency,
          i.tickSize,
          i.lotSize,
          i.lastPrice,
          i.previousClose,
          i.tradable,
          i.minQuantity ?? '1',
          i.maxQuantity ?? '100000',
        ],
      );
    if (data.fxRates?.length) await tx.getRepository(FxRateEntity).createQueryBuilder().insert().values(data.fxRates).orIgnore().execute();
  });
}
