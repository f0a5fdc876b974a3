import Decimal from 'decimal.js';
import type { DataSource, Repository } from 'typeorm';
import type { InstrumentsService } from '../instruments/instruments.service';
import { FxRateEntity, type FxRate } from './entities/fx-rate.entity';

interface Mark {
  symbol: string;
  currency: string;
  lastPrice: string;
  previousClose: string;
}

export interface MarketSnapshot {
  asOf: string;
  prices: Mark[];
  fxRates: FxRate[];
}

export class MarketService {
  private readonly fxRates: Repository<FxRate>;
  constructor(
    dataSource: DataSource,
    private readonly instruments: InstrumentsService,
  ) {
    this.fxRates = dataSource.getRepository(FxRateEntity);
  }

  async snapshot(): Promise<MarketSnapshot> {
    const [instruments, rates] = await Promise.all([this.instruments.list(), this.fxRates.find({ order: { currency: 'ASC' } })]);
    return {
      asOf: new Date().toISOString(),
      prices: instruments.map(({ symbol, currency, lastPrice, previousClose }) => ({ symbol, currency, lastPrice, previousClose })),
      fxRates: rates.map((r) => ({ currency: r.currency, usdRate: new Decimal(r.usdRate).toString() })),
    };
  }
}
