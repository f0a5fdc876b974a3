import type { DataSource } from 'typeorm';
import { InstrumentEntity, type Instrument } from './instruments/entities/instrument.entity';
import { FxRateEntity, type FxRate } from './market/entities/fx-rate.entity';

export interface OmsDemoData {
  instruments: Instrument[];
  /** US dollars per unit of each currency (USD is 1 already). */
  fxRates?: FxRate[];
}

/** Demo instruments with prices, and FX rates, for the all-in-one mode; existing rows are left as they are. */
export async function seedOmsDemo(dataSource: DataSource, data: OmsDemoData): Promise<void> {
  await dataSource.transaction(async (tx) => {
    if (data.instruments.length)
      await tx.getRepository(InstrumentEntity).createQueryBuilder().insert().values(data.instruments).orIgnore().execute();
    if (data.fxRates?.length) await tx.getRepository(FxRateEntity).createQueryBuilder().insert().values(data.fxRates).orIgnore().execute();
  });
}
