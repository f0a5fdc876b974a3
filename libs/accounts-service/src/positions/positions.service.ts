import { AppError } from '@trading/errors';
import { parseLimit, type CursorCodec, type Page } from '@trading/pagination';
import { MoreThan, type DataSource, type Repository } from 'typeorm';
import { canonical, formatPrice } from '@trading/money';
import { PositionEntity, type Position } from './entities/position.entity';

/** Instrument symbols as the OMS lists them: upper case letters, digits and dots (BRK.B). */
export const SYMBOL = /^[A-Z0-9.]{1,12}$/;

export function parseSymbol(value: unknown): string {
  if (typeof value !== 'string' || !SYMBOL.test(value)) {
    throw new AppError('BAD_USER_INPUT', 'symbol must be an instrument symbol: 1 to 12 upper-case letters, digits or dots', {
      field: 'symbol',
    });
  }
  return value;
}

export class PositionsService {
  private readonly positions: Repository<Position>;
  constructor(
    dataSource: DataSource,
    private readonly cursors: CursorCodec,
  ) {
    this.positions = dataSource.getRepository(PositionEntity);
  }

  /** One page of an account's holdings, by symbol. The cursor is bound to the account it came from. */
  async page(accountId: string, args: { limit?: unknown; cursor?: unknown }): Promise<Page<Position>> {
    const limit = parseLimit(args.limit);
    const scope = `positions:${accountId}`;
    const after = this.cursors.decode<{ s: string }>(args.cursor, scope, ['s']);
    const rows = await this.positions.find({
      where: { accountId, ...(after ? { symbol: MoreThan(after.s) } : {}) },
      order: { symbol: 'ASC' },
      take: limit + 1,
    });
    return this.cursors.page(rows, limit, scope, (last) => ({ s: last.symbol }), present);
  }

  /** The holding in `symbol`, or null when the account holds none. */
  async find(accountId: string, symbol: unknown): Promise<Position | null> {
    const row = await this.positions.findOneBy({ accountId, symbol: parseSymbol(symbol) });
    return row && present(row);
  }

  /** Every holding of an account (valuation needs them all). */
  async all(accountId: string): Promise<Position[]> {
    return (await this.positions.find({ where: { accountId }, order: { symbol: 'ASC' } })).map(present);
  }
}

// numeric comes back padded to its scale (10.00000000): quantities canonical, the average cost
// as a price (at least the currency's minor units, every digit kept).
const present = (p: Position): Position => ({
  ...p,
  quantity: canonical(p.quantity),
  averageCost: formatPrice(p.averageCost, p.currency),
  realizedPnl: canonical(p.realizedPnl),
});
