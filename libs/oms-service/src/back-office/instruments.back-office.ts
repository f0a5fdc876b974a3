import Decimal from 'decimal.js';
import type { DataSource } from 'typeorm';
import { AppError } from '@trading/errors';
import { parseCurrency } from '@trading/money';
import type { Instrument } from '../instruments/entities/instrument.entity';
import type { InstrumentsService } from '../instruments/instruments.service';

const SYMBOL = /^[A-Z0-9.]{1,12}$/;
const DECIMAL = /^\d{1,12}(\.\d{1,8})?$/;
const bad = (field: string, message: string) => new AppError('BAD_USER_INPUT', `${field} ${message}`, { field });

function positive(input: Record<string, unknown>, field: string, fallback?: string): Decimal {
  const value = input[field] ?? fallback;
  if (typeof value !== 'string' || !DECIMAL.test(value) || new Decimal(value).lte(0))
    throw bad(field, 'must be a decimal string greater than zero, such as "0.01" (at most 8 decimals)');
  return new Decimal(value);
}

/** Instruments as the service team runs them: list, list a new one, halt and resume trading. */
export class InstrumentsBackOffice {
  constructor(
    private readonly dataSource: DataSource,
    private readonly instruments: InstrumentsService,
  ) {}

  list(): Promise<Instrument[]> {
    return this.instruments.list();
  }

  /** A new tradable instrument at `price` (also its previous close). Every field is checked; the price must sit on the tick. */
  async add(input: Record<string, unknown>): Promise<Instrument> {
    const symbol = input['symbol'];
    if (typeof symbol !== 'string' || !SYMBOL.test(symbol))
      throw bad('symbol', 'must be 1 to 12 upper-case letters, digits or dots, e.g. NVDA or BRK.B');
    const name = typeof input['name'] === 'string' ? input['name'].trim() : '';
    if (!name || name.length > 200) throw bad('name', 'is required (at most 200 characters)');
    const currency = parseCurrency(input['currency']);
    const tick = positive(input, 'tickSize');
    const lot = positive(input, 'lotSize', '1');
    const price = positive(input, 'price');
    if (!price.mod(tick).isZero()) throw bad('price', `must be a multiple of the tick size ${tick.toFixed()}`);
    const minQuantity = positive(input, 'minQuantity', lot.toFixed());
    const maxQuantity = positive(input, 'maxQuantity', '100000');
    if (!minQuantity.mod(lot).isZero()) throw bad('minQuantity', `must be a multiple of the lot size ${lot.toFixed()}`);
    if (maxQuantity.lt(minQuantity)) throw bad('maxQuantity', 'must be at least minQuantity');
    const inserted: unknown[] = await this.dataSource.query(
      `INSERT INTO instruments (symbol, name, currency, tick_size, lot_size, last_price, previous_close, tradable, min_quantity, max_quantity)
       VALUES ($1, $2, $3, $4, $5, $6, $6, true, $7, $8) ON CONFLICT (symbol) DO NOTHING RETURNING symbol`,
      [symbol, name, currency, tick.toFixed(), lot.toFixed(), price.toFixed(), minQuantity.toFixed(), maxQuantity.toFixed()],
    );
    if (!inserted.length) throw new AppError('CONFLICT', `${symbol} is already listed`, { field: 'symbol' });
    this.instruments.changed([symbol]);
    return (await this.instruments.find(symbol))!;
  }

  /**
   * Halted: new orders are refused (422) and working orders do not fill; its price stays where
   * it was. Resumed: all of that again. Either is harmless twice.
   */
  async setTradable(symbol: unknown, tradable: boolean): Promise<Instrument> {
    if (typeof symbol !== 'string' || !SYMBOL.test(symbol)) throw bad('symbol', 'must be an instrument symbol');
    // TypeORM answers an UPDATE … RETURNING with [rows, count].
    const [updated]: [unknown[], number] = await this.dataSource.query(
      'UPDATE instruments SET tradable = $2 WHERE symbol = $1 RETURNING symbol',
      [symbol, tradable],
    );
    if (!updated.length) throw new AppError('NOT_FOUND', `Unknown symbol ${symbol}`, { field: 'symbol' });
    // A halt takes effect on this instance's next order at once; on the others when they hear the trigger.
    this.instruments.changed([symbol]);
    return (await this.instruments.find(symbol))!;
  }
}
