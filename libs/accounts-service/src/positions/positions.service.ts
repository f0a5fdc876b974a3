import { AppError } from '@trading/errors';
import { parseLimit, type CursorCodec, type Page } from '@trading/pagination';
import { queryPrepared, type DataSource, type PreparedStatement } from '@trading/db';
import { canonical, formatPrice } from '@trading/money';
import type { Position } from './entities/position.entity';

/** The positions table is read and written with SQL only (settlement writes it); reads name columns as `Position` spells them. */
const POSITION_COLUMNS = `account_id AS "accountId", symbol, quantity::text AS quantity, average_cost::text AS "averageCost",
  currency, realized_pnl::text AS "realizedPnl", updated_at AS "updatedAt"`;

/**
 * A page of an account's holdings after a symbol ('' for the first page), the closed ones
 * (quantity 0) only when $4: read by every positions call.
 */
const POSITIONS_PAGE: PreparedStatement = {
  name: 'positions-page',
  text: `SELECT ${POSITION_COLUMNS} FROM positions WHERE account_id = $1 AND symbol > $2 AND ($4 OR quantity <> 0) ORDER BY symbol LIMIT $3`,
};
const ALL_POSITIONS: PreparedStatement = {
  name: 'positions-of-account',
  text: `SELECT ${POSITION_COLUMNS} FROM positions WHERE account_id = $1 ORDER BY symbol`,
};
const ONE_POSITION: PreparedStatement = {
  name: 'position-in-symbol',
  text: `SELECT ${POSITION_COLUMNS} FROM positions WHERE account_id = $1 AND symbol = $2`,
};

/** Instrument symbols as the OMS lists them: upper case letters, digits and dots (BRK.B). */
const SYMBOL = /^[A-Z0-9.]{1,12}$/;

export function parseSymbol(value: unknown): string {
  if (typeof value !== 'string' || !SYMBOL.test(value)) {
    throw new AppError('BAD_USER_INPUT', 'symbol must be an instrument symbol: 1 to 12 upper-case letters, digits or dots', {
      field: 'symbol',
    });
  }
  return value;
}

export class PositionsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
  ) {}

  /**
   * One page of an account's holdings, by symbol: open ones, and closed ones too with
   * `includeClosed`. The cursor is bound to the account and to the list (with or without the
   * closed ones) it came from.
   */
  async page(accountId: string, args: { limit?: unknown; cursor?: unknown; includeClosed?: unknown }): Promise<Page<Position>> {
    const limit = parseLimit(args.limit);
    const includeClosed = args.includeClosed === true;
    const scope = includeClosed ? `positions:${accountId}:closed` : `positions:${accountId}`;
    const after = this.cursors.decode<{ s: string }>(args.cursor, scope, ['s']);
    const rows = await queryPrepared<Position>(this.dataSource, POSITIONS_PAGE, [accountId, after?.s ?? '', limit + 1, includeClosed]);
    return this.cursors.page(rows, limit, scope, (last) => ({ s: last.symbol }), present);
  }

  /** The holding in `symbol`, or null when the account holds none. */
  async find(accountId: string, symbol: unknown): Promise<Position | null> {
    const [row] = await queryPrepared<Position>(this.dataSource, ONE_POSITION, [accountId, parseSymbol(symbol)]);
    return row ? present(row) : null;
  }

  /** Every holding of an account (valuation needs them all). */
  async all(accountId: string): Promise<Position[]> {
    return (await queryPrepared<Position>(this.dataSource, ALL_POSITIONS, [accountId])).map(present);
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
