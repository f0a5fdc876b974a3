import { canonical, formatPrice } from '@trading/money';
import { queryPrepared, type DataSource, type PreparedStatement } from '@trading/db';
import type { Instrument } from './entities/instrument.entity';

/** The instruments table is read and written with SQL only (the feed, the engine and the back office write it). */
const INSTRUMENT_COLUMNS = `symbol, name, currency, tick_size::text AS "tickSize", lot_size::text AS "lotSize",
  last_price::text AS "lastPrice", previous_close::text AS "previousClose", tradable,
  min_quantity::text AS "minQuantity", max_quantity::text AS "maxQuantity"`;
const ALL_INSTRUMENTS: PreparedStatement = { name: 'instruments', text: `SELECT ${INSTRUMENT_COLUMNS} FROM instruments ORDER BY symbol` };
/** Read by every order, what-if and quote. */
const ONE_INSTRUMENT: PreparedStatement = { name: 'instrument', text: `SELECT ${INSTRUMENT_COLUMNS} FROM instruments WHERE symbol = $1` };

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
  constructor(private readonly dataSource: DataSource) {}

  async list(): Promise<Required<Instrument>[]> {
    return (await queryPrepared<Instrument>(this.dataSource, ALL_INSTRUMENTS, [])).map(present);
  }

  async find(symbol: string): Promise<Required<Instrument> | null> {
    const [row] = await queryPrepared<Instrument>(this.dataSource, ONE_INSTRUMENT, [symbol]);
    return row ? present(row) : null;
  }
}
