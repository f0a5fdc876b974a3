import Decimal from 'decimal.js';
import type { DataSource, Repository } from 'typeorm';
import { PositionEntity, type Position } from './entities/position.entity';

export class PositionsService {
  private readonly positions: Repository<Position>;
  constructor(dataSource: DataSource) {
    this.positions = dataSource.getRepository(PositionEntity);
  }

  async forAccount(accountId: string): Promise<Position[]> {
    const rows = await this.positions.find({ where: { accountId }, order: { symbol: 'ASC' } });
    // numeric comes back padded to its scale (10.00000000); show the canonical decimal.
    return rows.map((p) => ({ ...p, quantity: new Decimal(p.quantity).toString(), averageCost: new Decimal(p.averageCost).toString() }));
  }
}
