import { createLogger, type Logger } from '@trading/logging';
import { CursorCodec } from '@trading/pagination';
import { createSubgraphService, type SubgraphService } from '@trading/subgraph';
import { AccountsService } from './accounts/accounts.service';
import { AccountEntity } from './accounts/entities/account.entity';
import { accountsResolvers } from './accounts/resolvers';
import type { AccountsConfig } from './config';
import { Accounts1732230000001 } from './migrations/1732230000001-accounts';
import { PositionsRealizedPnl1732230000011 } from './migrations/1732230000011-positions-realized-pnl';
import { PositionEntity } from './positions/entities/position.entity';
import { PositionsService } from './positions/positions.service';
import { positionsResolvers } from './positions/resolvers';
import { accountsSubgraphSdl } from './schema';
import { accountsScopes } from './scopes';
import { valuationResolvers } from './valuation/resolvers';

export { loadAccountsConfig, type AccountsConfig } from './config';
export { seedAccountsDemo, type AccountsDemoData } from './demo-seed';

export function createAccountsApp(config: AccountsConfig, deps: { logger?: Logger } = {}): Promise<SubgraphService> {
  return createSubgraphService({
    name: 'accounts',
    logger: deps.logger ?? createLogger('accounts', config.LOG_LEVEL),
    databaseUrl: config.ACCOUNTS_DATABASE_URL,
    internalSigningKey: config.INTERNAL_SIGNING_KEY,
    entities: [AccountEntity, PositionEntity],
    migrations: [Accounts1732230000001, PositionsRealizedPnl1732230000011],
    typeDefs: accountsSubgraphSdl,
    scopes: accountsScopes,
    resolvers: (dataSource) => {
      const accounts = new AccountsService(dataSource);
      const positions = new PositionsService(dataSource, new CursorCodec(config.INTERNAL_SIGNING_KEY));
      return [accountsResolvers(accounts), positionsResolvers(positions, accounts), valuationResolvers(positions)];
    },
  });
}
