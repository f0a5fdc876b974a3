import { InternalClaimsVerifier } from '@trading/auth';
import { AccountChangesAnnouncer } from '@trading/accounts-directory';
import { NotifiedCache } from '@trading/db';
import {
  connectEventLog,
  consumerMetrics,
  settlementConsumer,
  type ConsumerOptions,
  type EventLog,
  type StreamConsumer,
} from '@trading/events';
import { createLogger, type Logger } from '@trading/logging';
import { CursorCodec } from '@trading/pagination';
import { Lifecycle } from '@trading/service';
import { createSubgraphService, identityTools, scalarResolvers, type SubgraphService } from '@trading/subgraph';
import type { Account } from './accounts/entities/account.entity';
import { ACCOUNTS_CHANGED_CHANNEL, AccountsService } from './accounts/accounts.service';
import { mountAccountsBackOffice } from './back-office/back-office.routes';
import { AccountsBackOffice } from './back-office/back-office.service';
import { accountsResolvers } from './accounts/resolvers';
import type { AccountsConfig } from './config';
import { Accounts1732230000001 } from './migrations/1732230000001-accounts';
import { PositionsRealizedPnl1732230000011 } from './migrations/1732230000011-positions-realized-pnl';
import { Settlement1732230000023 } from './migrations/1732230000023-settlement';
import { AccountsChanged1732230000031 } from './migrations/1732230000031-accounts-changed';
import { AccountSettings1732230000110 } from './migrations/1732230000110-account-settings';
import { PositionsService } from './positions/positions.service';
import { positionsResolvers } from './positions/resolvers';
import { accountsSubgraphSdl } from './schema';
import { accountsScopes } from './scopes';
import { settlementResolvers } from './settlement/resolvers';
import { PositionSettlementService } from './settlement/settlement.service';
import { valuationResolvers } from './valuation/resolvers';

export { loadAccountsConfig, type AccountsConfig } from './config';
export { seedAccountsDemo } from './demo-seed';

/** This subgraph's SDL, for the supergraph tool. */
export { accountsSubgraphSdl } from './schema';

export interface AccountsDeps {
  logger?: Logger;
  /** The OMS's settlement stream; by default Redis at REDIS_URL (the all-in-one launcher passes its own). */
  events?: EventLog;
  /** Its settlement consumer's name (default `accounts@<host>:<pid>`) and claim idle time (default 30 s), e.g. for crash tests. */
  settlementConsumer?: Pick<ConsumerOptions, 'consumer' | 'claimIdleMs'>;
}

export interface AccountsApp extends SubgraphService {
  /** The consumer applying the settlement stream (crash tests abort it). */
  settlementConsumer: StreamConsumer;
}

const accountsMigrations = [
  Accounts1732230000001,
  PositionsRealizedPnl1732230000011,
  Settlement1732230000023,
  AccountsChanged1732230000031,
  AccountSettings1732230000110,
];

export async function createAccountsApp(config: AccountsConfig, deps: AccountsDeps = {}): Promise<AccountsApp> {
  const logger = deps.logger ?? createLogger('accounts', config.LOG_LEVEL);
  const { cursorKey } = identityTools(config);
  let settlement: PositionSettlementService | undefined;
  // Closed in reverse on close(), or at once if a later step fails.
  const life = Lifecycle.of('accounts', logger);
  return life.build(async () => {
    const accountsOfUser = life.own(
      'accounts cache',
      new NotifiedCache<readonly Account[]>({
        url: config.ACCOUNTS_DATABASE_URL,
        channel: ACCOUNTS_CHANGED_CHANNEL,
        logger,
        maxEntries: config.ACCOUNTS_CACHE_ENTRIES,
      }),
      (c) => c.close(),
    );
    const service = life.own(
      'subgraph',
      await createSubgraphService({
        name: 'accounts',
        logger,
        databaseUrl: config.ACCOUNTS_DATABASE_URL,
        statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
        identity: config,
        entities: [],
        migrations: accountsMigrations,
        typeDefs: accountsSubgraphSdl,
        scopes: accountsScopes,
        resolvers: (dataSource) => {
          const accounts = new AccountsService(dataSource, accountsOfUser);
          const positions = new PositionsService(dataSource, new CursorCodec(cursorKey));
          settlement = new PositionSettlementService(dataSource);
          return [
            scalarResolvers,
            accountsResolvers(accounts),
            positionsResolvers(positions, accounts),
            valuationResolvers(positions),
            settlementResolvers(settlement),
          ];
        },
        routes: (internal, dataSource) =>
          mountAccountsBackOffice(
            internal,
            new AccountsBackOffice(dataSource, accountsOfUser),
            new InternalClaimsVerifier('accounts', config.SERVICE_TRUSTED_KEYS),
          ),
      }),
      (s) => s.close(),
    );
    // After the migrations: the trigger that announces changes exists by now.
    accountsOfUser.start();
    const events = deps.events ?? life.own('event log', await connectEventLog(config), (e) => e.close());
    // What the cache hears, passed on to the OMS (which remembers accounts between orders).
    const announcer = life.own(
      'accounts changes announcer',
      new AccountChangesAnnouncer(accountsOfUser, events, config.ACCOUNT_CHANGES_STREAM, config.SERVICE_KEY, logger),
      (a) => a.close(),
    );
    announcer.start();
    const consumer = positionsSettlementConsumer(config, deps, settlement!, events, service, logger);
    await consumer.start();
    life.defer('settlement consumer', () => consumer.stop());
    return {
      ...service,
      settlementConsumer: consumer,
      close: () => life.close(),
    };
  });
}

/** The consumer that applies the OMS's settlement stream (trades, closes) to positions. */
function positionsSettlementConsumer(
  config: AccountsConfig,
  deps: AccountsDeps,
  positions: PositionSettlementService,
  events: EventLog,
  service: SubgraphService,
  logger: Logger,
): StreamConsumer {
  return settlementConsumer(
    'accounts',
    (event) => positions.apply(event),
    { log: events, stream: config.EVENTS_STREAM, logger, signers: config.SERVICE_TRUSTED_KEYS },
    {
      claimIdleMs: config.SETTLEMENT_CLAIM_IDLE_MS,
      ...deps.settlementConsumer,
      ...consumerMetrics(service.metrics, events, config.EVENTS_STREAM, 'accounts', deps.settlementConsumer?.consumer),
    },
  );
}
