import { createLogger, type Logger } from '@trading/logging';
import { createSubgraphService, type SubgraphService } from '@trading/subgraph';
import { BalancesService } from './balances/balances.service';
import { JournalEntryEntity, PostingEntity } from './balances/entities/posting.entity';
import { balancesResolvers } from './balances/resolvers';
import type { BankingConfig } from './config';
import { Ledger1732230000002 } from './migrations/1732230000002-ledger';
import { bankingSubgraphSdl } from './schema';
import { bankingScopes } from './scopes';

export { loadBankingConfig, type BankingConfig } from './config';
export { seedBankingDemo, type BankingDemoData } from './demo-seed';

export function createBankingApp(config: BankingConfig, deps: { logger?: Logger } = {}): Promise<SubgraphService> {
  return createSubgraphService({
    name: 'banking',
    logger: deps.logger ?? createLogger('banking', config.LOG_LEVEL),
    databaseUrl: config.BANKING_DATABASE_URL,
    internalSigningKey: config.INTERNAL_SIGNING_KEY,
    entities: [JournalEntryEntity, PostingEntity],
    migrations: [Ledger1732230000002],
    typeDefs: bankingSubgraphSdl,
    scopes: bankingScopes,
    resolvers: (dataSource) => [balancesResolvers(new BalancesService(dataSource))],
  });
}
