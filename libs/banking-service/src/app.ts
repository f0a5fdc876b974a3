import { InternalClaimsVerifier } from '@trading/auth';
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
import { OutboxRelay, outboxMetrics } from '@trading/outbox';
import { Lifecycle, startPeriodic, type GraphQLEndpoint } from '@trading/service';
import { createSubgraphService, identityTools, scalarResolvers, type SubgraphService } from '@trading/subgraph';
import { ActivityService } from './activity/activity.service';
import { activityResolvers } from './activity/resolvers';
import { BalancesService } from './balances/balances.service';
import { balancesResolvers } from './balances/resolvers';
import { RELAY_INTERVAL_MS, type BankingConfig } from './config';
import { ClearingWorker } from './funding/clearing';
import { FundingService } from './funding/funding.service';
import { fundingResolvers } from './funding/resolvers';
import { sandboxResolvers } from './sandbox/resolvers';
import { mountBankingBackOffice } from './back-office/back-office.routes';
import { mountHoldRoutes } from './holds/holds.routes';
import { HoldsService } from './holds/holds.service';
import { fundingIdempotency } from './idempotency/idempotency';
import { AccountsSubgraphDirectory, KnownOwners, type AccountsDirectory } from '@trading/accounts-directory';
import { bankingSubgraphSdl } from './schema';
import { bankingScopes } from './scopes';
import { SaleSettlements } from './settlement/sale-settlement';
import { SettlementService } from './settlement/settlement.service';
import { bankingMigrations } from './migrations';

export { BOOK_BALANCE_DRIFT_SQL } from './ledger/ledger';
export { loadBankingConfig, type BankingConfig } from './config';
export { seedBankingDemo } from './demo-seed';

/** This subgraph's SDL, for the supergraph tool. */
export { bankingSubgraphSdl } from './schema';

export interface BankingDeps {
  logger?: Logger;
  /** Who owns an account; by default the accounts subgraph at ACCOUNTS_URL. */
  ownership?: AccountsDirectory;
  /** The accounts subgraph when it runs in this process (the all-in-one), asked without a socket. */
  accountsGraphql?: () => GraphQLEndpoint | undefined;
  /** The settlement stream (read, and written with funding events); by default Redis at REDIS_URL (the all-in-one launcher passes its own). */
  events?: EventLog;
  /** Its settlement consumer's name (default `banking@<host>:<pid>`) and claim idle time (default 30 s), e.g. for crash tests. */
  settlementConsumer?: Pick<ConsumerOptions, 'consumer' | 'claimIdleMs'>;
}

export interface BankingApp extends SubgraphService {
  /** The consumer applying the settlement stream (crash tests abort it). */
  settlementConsumer: StreamConsumer;
  /** Publishes banking's outbox (funding events) to the stream, signed with banking's key. */
  relay: OutboxRelay;
}

export async function createBankingApp(config: BankingConfig, deps: BankingDeps = {}): Promise<BankingApp> {
  const logger = deps.logger ?? createLogger('banking', config.LOG_LEVEL);
  const { signer, cursorKey } = identityTools(config);
  const cursors = new CursorCodec(cursorKey);
  // Closed in reverse on close(), or at once if a later step fails.
  const life = Lifecycle.of('banking', logger);
  return life.build(async () => {
    const ownership =
      deps.ownership ??
      life.own('accounts client', new AccountsSubgraphDirectory(config.ACCOUNTS_URL, signer, deps.accountsGraphql), (o) => o.close());
    let funding: FundingService | undefined;
    // Made once the database is open (below); a funding change before that is published at the relay's first pass.
    const made: { relay?: OutboxRelay } = {};
    const service = life.own(
      'subgraph',
      await createSubgraphService({
        name: 'banking',
        logger,
        databaseUrl: config.BANKING_DATABASE_URL,
        statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
        identity: config,
        // Every banking table is read and written with SQL (the ledger's postings, holds, funding, idempotency keys).
        entities: [],
        migrations: bankingMigrations,
        typeDefs: bankingSubgraphSdl,
        scopes: bankingScopes,
        resolvers: (dataSource) => {
          funding = new FundingService(dataSource, ownership, cursors, {
            clearingDelayMs: config.BANKING_CLEARING_DELAY_MS,
            sandbox: config.BANKING_SANDBOX,
            maxTransactionAmount: config.BANKING_MAX_TRANSACTION_AMOUNT,
            // A funding change's event is sent now, not at the relay's next pass.
            onFinished: () => made.relay?.wake(),
          });
          return [
            scalarResolvers,
            balancesResolvers(new BalancesService(dataSource), ownership),
            activityResolvers(new ActivityService(dataSource, cursors)),
            fundingResolvers(funding),
            sandboxResolvers(funding),
          ];
        },
        routes: (internal, dataSource) => {
          const verifier = new InternalClaimsVerifier('banking', config.SERVICE_TRUSTED_KEYS);
          mountHoldRoutes(internal, new HoldsService(dataSource), verifier, new KnownOwners(ownership));
          mountBankingBackOffice(internal, dataSource, new BalancesService(dataSource), verifier);
        },
      }),
      (s) => s.close(),
    );
    const sales = new SaleSettlements(service.dataSource, config.BANKING_SETTLEMENT_DAYS);
    const clearing = new ClearingWorker(funding!, config.BANKING_CLEARING_POLL_MS, logger, sales);
    clearing.start();
    life.defer('clearing', () => clearing.stop());
    const retention = startPeriodic('retention', 3_600_000, () => fundingIdempotency.purgeExpired(service.dataSource), logger);
    life.defer('retention', () => retention.stop());
    const events = deps.events ?? life.own('event log', await connectEventLog(config), (e) => e.close());
    const relay = startRelay(life, config, service, events, logger);
    made.relay = relay;
    const settlementService = new SettlementService(service.dataSource, sales);
    const settlement = settlementConsumer(
      'banking',
      (event) => settlementService.apply(event),
      { log: events, stream: config.EVENTS_STREAM, logger, signers: config.SERVICE_TRUSTED_KEYS },
      {
        claimIdleMs: config.SETTLEMENT_CLAIM_IDLE_MS,
        ...deps.settlementConsumer,
        ...consumerMetrics(service.metrics, events, config.EVENTS_STREAM, 'banking', deps.settlementConsumer?.consumer),
      },
    );
    await settlement.start();
    life.defer('settlement consumer', () => settlement.stop());
    return { ...service, settlementConsumer: settlement, relay, close: () => life.close() };
  });
}

/** Banking's outbox relay: funding events onto the stream, signed with banking's own key, counting what it had to publish again. */
function startRelay(life: Lifecycle, config: BankingConfig, service: SubgraphService, events: EventLog, logger: Logger): OutboxRelay {
  const republished = outboxMetrics(service.metrics, service.dataSource, 'banking');
  const relay = new OutboxRelay(
    service.dataSource,
    events,
    config.EVENTS_STREAM,
    config.BANKING_RELAY_INTERVAL_MS ?? RELAY_INTERVAL_MS,
    logger,
    config.SERVICE_KEY,
    republished,
  );
  relay.start();
  life.defer('outbox relay', () => relay.stop());
  return relay;
}
