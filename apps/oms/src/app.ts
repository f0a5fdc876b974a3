import { createLogger, type Logger } from '@trading/logging';
import { createSubgraphService, type SubgraphService } from '@trading/subgraph';
import type { OmsConfig } from './config';
import { InstrumentEntity } from './instruments/entities/instrument.entity';
import { InstrumentsService } from './instruments/instruments.service';
import { instrumentsResolvers } from './instruments/resolvers';
import { FxRateEntity } from './market/entities/fx-rate.entity';
import { MarketService } from './market/market.service';
import { marketResolvers } from './market/resolvers';
import { Oms1732230000003 } from './migrations/1732230000003-oms';
import { Market1732230000013 } from './migrations/1732230000013-market';
import { OrderEntity } from './orders/entities/order.entity';
import { OrdersService } from './orders/orders.service';
import { ordersResolvers } from './orders/resolvers';
import { omsSubgraphSdl } from './schema';
import { omsScopes } from './scopes';

export { loadOmsConfig, type OmsConfig } from './config';
export { seedOmsDemo, type OmsDemoData } from './demo-seed';

export function createOmsApp(config: OmsConfig, deps: { logger?: Logger } = {}): Promise<SubgraphService> {
  return createSubgraphService({
    name: 'oms',
    logger: deps.logger ?? createLogger('oms', config.LOG_LEVEL),
    databaseUrl: config.OMS_DATABASE_URL,
    internalSigningKey: config.INTERNAL_SIGNING_KEY,
    entities: [InstrumentEntity, OrderEntity, FxRateEntity],
    migrations: [Oms1732230000003, Market1732230000013],
    typeDefs: omsSubgraphSdl,
    scopes: omsScopes,
    resolvers: (dataSource) => {
      const instruments = new InstrumentsService(dataSource);
      return [instrumentsResolvers(instruments), ordersResolvers(new OrdersService(dataSource)), marketResolvers(new MarketService(dataSource, instruments))];
    },
  });
}
