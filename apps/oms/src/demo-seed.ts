import type { DataSource } from 'typeorm';
import { InstrumentEntity, type Instrument } from './instruments/entities/instrument.entity';

export interface OmsDemoData {
  instruments: Instrument[];
}

/** Demo instruments with prices for the all-in-one mode; existing rows are left as they are. */
export async function seedOmsDemo(dataSource: DataSource, data: OmsDemoData): Promise<void> {
  await dataSource.getRepository(InstrumentEntity).createQueryBuilder().insert().values(data.instruments).orIgnore().execute();
}
