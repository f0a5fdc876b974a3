import { canonical, formatPrice } from '@trading/money';
import type { DataSource, Repository } from 'typeorm';
import { InstrumentEntity, type Instrument } from './entities/instrument.entity';

/** As listed: the quantity limits' defaults filled in. */
const present = (i: Instrument): Required<Instrument> => ({
  ...i,
  tickSize: canonical(i.tickSize),
  lotSize: canonical(i.lotSize),
  lastPrice: formatPrice(i.lastPrice, i.currency, i.tickSize),
  previousClose: formatPrice(i.previousClose, i.currency, i.tickSize),
  minQuantity: canonical(i.minQuantity ?? '1'),
  maxQuantity: canonical(i.maxQuantity ?? '100000'),
});

export class InstrumentsService {
  private readonly instruments: Repository<Instrument>;
  constructor(dataSource: DataSource) {
    this.instruments = dataSource.getRepository(InstrumentEntity);
  }

  async list(): Promise<Required<Instrument>[]> {
    const rows = await this.instruments.find({ order: { symbol: 'ASC' } });
    return rows.map(present);
  }

  async find(symbol: string): Promise<Required<Instrument> | null> {
    const row = await this.instruments.findOneBy({ symbol });
    return row && present(row);
  }
}
