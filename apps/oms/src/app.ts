import { createLogger, type Logger } from '@trading/logging';
import { createSubgraphService, type SubgraphService } from '@trading/subgraph';
import type { OmsConfig } from './config';
import { InstrumentEntity } from './instruments/entities/instrument.entity';
import { InstrumentsService } from './instruments/instruments.service';
import { instrumentsResolvers } from './instruments/resolvers';
import { Oms1732230000003 } from './migrations/1732230000003-oms';
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
    entities: [InstrumentEntity, OrderEntity],
    migrations: [Oms1732230000003],
    typeDefs: omsSubgraphSdl,
    scopes: omsScopes,
    resolvers: (dataSource) => [instrumentsResolvers(new InstrumentsService(dataSource)), ordersResolvers(new OrdersService(dataSource))],
  });
}
