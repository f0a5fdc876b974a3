import Decimal from 'decimal.js';
import type { DataSource, Repository } from 'typeorm';
import { InstrumentEntity, type Instrument } from './entities/instrument.entity';

const canonical = (value: string) => new Decimal(value).toString();

export class InstrumentsService {
  private readonly instruments: Repository<Instrument>;
  constructor(dataSource: DataSource) {
    this.instruments = dataSource.getRepository(InstrumentEntity);
  }

  async list(): Promise<Instrument[]> {
    const rows = await this.instruments.find({ order: { symbol: 'ASC' } });
    return rows.map((i) => ({ ...i, tickSize: canonical(i.tickSize), lotSize: canonical(i.lotSize), lastPrice: canonical(i.lastPrice), previousClose: canonical(i.previousClose) }));
  }
}
