import { canonical, formatPrice } from '@trading/money';
import { queryPrepared, type DataSource, type NotifiedCache, type PreparedStatement } from '@trading/db';
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

export type ListedInstrument = Readonly<Required<Instrument>>;

export class InstrumentsService {
  constructor(
    private readonly dataSource: DataSource,
    /**
     * Instruments read, by symbol, kept current by the `instruments_changed` trigger (migration
     * 080): every order reads its instrument, and a round trip for a row that changes once a
     * second (the price) was a quarter of a resting order's statements. None when absent.
     */
    private readonly remembered?: NotifiedCache<ListedInstrument | null>,
  ) {}

  async list(): Promise<ListedInstrument[]> {
    return (await queryPrepared<Instrument>(this.dataSource, ALL_INSTRUMENTS, [])).map(present);
  }

  async find(symbol: string): Promise<ListedInstrument | null> {
    const load = async () => {
      const [row] = await queryPrepared<Instrument>(this.dataSource, ONE_INSTRUMENT, [symbol]);
      return row ? Object.freeze(present(row)) : null;
    };
    // An unknown symbol is not kept: anyone can ask for any number of them.
    return this.remembered ? this.remembered.get(symbol, load, (found) => found !== null) : load();
  }

  /** Whether instruments are answered from memory now (the trigger's notifications are being heard). */
  get serving(): boolean {
    return this.remembered?.serving ?? false;
  }

  /**
   * This instance changed these instruments (a price step, a halt): its own next read sees the
   * change at once; other instances hear of it from the trigger when the change commits.
   */
  changed(symbols: readonly string[]): void {
    for (const symbol of symbols) this.remembered?.forget(symbol);
  }
}
