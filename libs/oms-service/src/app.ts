import { InternalClaimsVerifier, type InternalClaimsSigner } from '@trading/auth';
import { connectEventLog, type EventLog } from '@trading/events';
import { Bulkhead, NotifiedCache, type DataSource } from '@trading/db';
import { createLogger, type Logger } from '@trading/logging';
import { CursorCodec } from '@trading/pagination';
import { OutboxRelay, outboxMetrics } from '@trading/outbox';
import { Lifecycle, startPeriodic, type GraphQLEndpoint } from '@trading/service';
import { createSubgraphService, identityTools, scalarResolvers, type SubgraphService } from '@trading/subgraph';
import { mountOmsBackOffice } from './back-office/back-office.routes';
import { InstrumentsBackOffice } from './back-office/instruments.back-office';
import type { OmsConfig } from './config';
import { InstrumentsService, type ListedInstrument } from './instruments/instruments.service';
import { instrumentsResolvers } from './instruments/resolvers';
import { FxRateEntity } from './market/entities/fx-rate.entity';
import { MarketService } from './market/market.service';
import { PriceFeed } from './market/price-feed';
import { marketResolvers } from './market/resolvers';
import { TradingHours } from './market/trading-hours';
import { MarketDataService } from './market-data/market-data.service';
import { marketDataResolvers } from './market-data/resolvers';
import { MarketTicks } from './market-data/ticks';
import { checkOpenOrderCapSetting, INSTRUMENTS_CHANGED_CHANNEL, OPEN_ORDER_CAP_SETTING, omsMigrations } from './migrations';
import { AccountsSubgraphDirectory, RememberedAccounts } from '@trading/accounts-directory';
import { BankingClient } from './orders/clients';
import { ExecutionEngine } from './orders/engine';
import { openSellsResolvers } from './orders/open-sells';
import { orderIdempotency, OrdersService, type OrdersOptions } from './orders/orders.service';
import { OrderQueries } from './orders/order-queries';
import { ordersResolvers } from './orders/resolvers';
import { sandboxResolvers } from './sandbox/resolvers';
import { OrderSandbox } from './sandbox/sandbox.service';
import { omsSubgraphSdl } from './schema';
import { omsScopes } from './scopes';

export { loadOmsConfig, tradingHoursSetting, type OmsConfig } from './config';
export { seedOmsDemo } from './demo-seed';

/** This subgraph's SDL, for the supergraph tool. */
export { omsSubgraphSdl } from './schema';

export interface OmsDeps {
  logger?: Logger;
  /** The settlement stream; by default Redis at REDIS_URL (the all-in-one launcher passes its own). */
  events?: EventLog;
  /** The accounts subgraph when it runs in this process (the all-in-one), asked without a socket. */
  accountsGraphql?: () => GraphQLEndpoint | undefined;
}

/** The OMS subgraph plus its workers: the price feed, the execution engine and the outbox relay. */
export interface OmsApp extends SubgraphService {
  /** The accounts this instance remembers between orders (whether it answers from memory: `serving`). */
  accounts: RememberedAccounts;
  feed: PriceFeed;
  /** The instruments this instance reads and remembers (whether it answers from memory: `serving`). */
  instruments: InstrumentsService;
  engine: ExecutionEngine;
  relay: OutboxRelay;
}

export async function createOmsApp(config: OmsConfig, deps: OmsDeps = {}): Promise<OmsApp> {
  const logger = deps.logger ?? createLogger('oms', config.LOG_LEVEL);
  const { signer, cursorKey } = identityTools(config);
  const hours = new TradingHours(config.OMS_TRADING_HOURS);
  // Closed in reverse on close(), or at once if a later step fails.
  const life = Lifecycle.of('oms', logger);
  return life.build(async () => {
    const banking = life.own('banking client', new BankingClient(config.BANKING_URL, signer), (c) => c.close());
    const events = deps.events ?? life.own('event log', await connectEventLog(config), (e) => e.close());
    const accounts = rememberAccounts(life, config, deps, signer, events, logger);
    const rememberedInstruments = rememberInstruments(life, config, logger);
    // One per instance, shared by orders, quotes, the back office and the feed, so that its own changes are seen at once.
    let instruments: InstrumentsService | undefined;
    const instrumentsOf = (dataSource: DataSource) => (instruments ??= new InstrumentsService(dataSource, rememberedInstruments));
    // The engine is made once the database is open (below); a market order placed before that has nothing to wake.
    const made: { engine?: ExecutionEngine } = {};
    const service = life.own(
      'subgraph',
      await createSubgraphService({
        name: 'oms',
        logger,
        databaseUrl: config.OMS_DATABASE_URL,
        statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
        // The open-order cap is counted and enforced by the database (migration 060): it reads the limit from here.
        databaseSettings: { [OPEN_ORDER_CAP_SETTING]: String(config.OMS_MAX_OPEN_ORDERS_PER_ACCOUNT) },
        identity: config,
        // Orders and trades are read and written with SQL (order-store.ts); instruments and FX rates through these schemas.
        entities: [FxRateEntity],
        migrations: omsMigrations,
        typeDefs: omsSubgraphSdl,
        scopes: omsScopes,
        resolvers: (dataSource) => {
          const instruments = instrumentsOf(dataSource);
          const orders = new OrdersService(dataSource, instruments, accounts, banking, hours, ordersOptions(config, made), logger);
          const sandbox = new OrderSandbox(dataSource, accounts, () => made.engine, config.OMS_QUOTE_SPREAD);
          return [...omsResolvers(config, dataSource, instruments, orders, accounts, hours, cursorKey), sandboxResolvers(sandbox)];
        },
        routes: (internal, dataSource) =>
          mountOmsBackOffice(
            internal,
            dataSource,
            new InstrumentsBackOffice(dataSource, instrumentsOf(dataSource)),
            new InternalClaimsVerifier('oms', config.SERVICE_TRUSTED_KEYS),
            (accountId) => accounts.forgetAccount(accountId),
          ),
      }),
      (s) => s.close(),
    );
    const ds = service.dataSource;
    // After the migrations: the trigger that announces changes exists by now.
    rememberedInstruments.start();
    await checkOpenOrderCapSetting(ds, config.OMS_MAX_OPEN_ORDERS_PER_ACCOUNT);
    // Idempotency keys answer for a day; then they are deleted.
    const retention = startPeriodic('retention', 3_600_000, () => orderIdempotency.purgeExpired(ds), logger);
    life.defer('retention', () => retention.stop());
    const relay = startRelay(life, config, ds, events, service, logger);
    const engine = startEngine(life, config, ds, banking, hours, relay, made, logger);
    const feed = startFeed(life, config, ds, events, (symbols) => instrumentsOf(ds).changed(symbols), logger);
    return { ...service, accounts, feed, instruments: instrumentsOf(ds), engine, relay, close: () => life.close() };
  });
}

/** Accounts remembered between orders while accounts' announcements are heard (OMS_ACCOUNT_CACHE_ENTRIES). */
function rememberAccounts(
  life: Lifecycle,
  config: OmsConfig,
  deps: OmsDeps,
  signer: InternalClaimsSigner,
  events: EventLog,
  logger: Logger,
): RememberedAccounts {
  const accounts = life.own(
    'accounts client',
    new RememberedAccounts(
      new AccountsSubgraphDirectory(config.ACCOUNTS_URL, signer, deps.accountsGraphql),
      events,
      config.ACCOUNT_CHANGES_STREAM,
      config.SERVICE_TRUSTED_KEYS,
      logger,
      config.OMS_ACCOUNT_CACHE_ENTRIES,
    ),
    (c) => c.close(),
  );
  accounts.start();
  return accounts;
}

/** Instruments remembered between orders while the trigger's notifications are heard (OMS_INSTRUMENTS_CACHE_ENTRIES); started once the migrations ran. */
function rememberInstruments(life: Lifecycle, config: OmsConfig, logger: Logger): NotifiedCache<ListedInstrument | null> {
  return life.own(
    'instruments cache',
    new NotifiedCache<ListedInstrument | null>({
      url: config.OMS_DATABASE_URL,
      channel: INSTRUMENTS_CHANGED_CHANNEL,
      logger,
      maxEntries: config.OMS_INSTRUMENTS_CACHE_ENTRIES,
    }),
    (c) => c.close(),
  );
}

/** The order rules this instance applies; an order that must act at once wakes the engine once it exists. */
function ordersOptions(config: OmsConfig, made: { engine?: ExecutionEngine }): OrdersOptions {
  return {
    collar: config.OMS_MARKET_COLLAR,
    spread: config.OMS_QUOTE_SPREAD,
    commissionRate: config.OMS_COMMISSION_RATE,
    minimumCommission: config.OMS_MIN_COMMISSION,
    priceBand: config.OMS_PRICE_BAND,
    maxOpenOrdersPerAccount: config.OMS_MAX_OPEN_ORDERS_PER_ACCOUNT,
    maxOrderValue: config.OMS_MAX_ORDER_VALUE,
    actNow: () => made.engine?.wake(),
  };
}

/** The subgraph's resolvers: instruments, orders, the market, open sells and market data. */
function omsResolvers(
  config: OmsConfig,
  dataSource: DataSource,
  instruments: InstrumentsService,
  orders: OrdersService,
  accounts: RememberedAccounts,
  hours: TradingHours,
  cursorKey: string,
) {
  return [
    scalarResolvers,
    instrumentsResolvers(instruments),
    ordersResolvers(orders, new OrderQueries(dataSource, new CursorCodec(cursorKey)), accounts),
    marketResolvers(new MarketService(dataSource, instruments)),
    openSellsResolvers(dataSource, accounts),
    marketDataResolvers(
      new MarketDataService(
        dataSource,
        instruments,
        hours,
        new CursorCodec(cursorKey),
        {
          spread: config.OMS_QUOTE_SPREAD,
          retentionDays: config.OMS_MARKET_TICK_RETENTION_DAYS,
        },
        new Bulkhead(config.OMS_BAR_READS),
      ),
    ),
  ];
}

/** The outbox relay: settlement events onto the stream, counting what it had to publish again. */
function startRelay(life: Lifecycle, config: OmsConfig, ds: DataSource, events: EventLog, service: SubgraphService, logger: Logger) {
  const republished = outboxMetrics(service.metrics, ds, 'oms');
  const relay = new OutboxRelay(ds, events, config.EVENTS_STREAM, config.OMS_RELAY_INTERVAL_MS, logger, config.SERVICE_KEY, republished);
  relay.start();
  life.defer('outbox relay', () => relay.stop());
  return relay;
}

/** The execution engine, started; its passes that fill wake the relay, and a new market order wakes it (`made`). */
function startEngine(
  life: Lifecycle,
  config: OmsConfig,
  ds: DataSource,
  banking: BankingClient,
  hours: TradingHours,
  relay: OutboxRelay,
  made: { engine?: ExecutionEngine },
  logger: Logger,
): ExecutionEngine {
  const engine = new ExecutionEngine(
    ds,
    banking,
    hours,
    {
      intervalMs: config.OMS_ENGINE_INTERVAL_MS,
      liquidity: config.OMS_FILL_LIQUIDITY,
      spread: config.OMS_QUOTE_SPREAD,
      commission: { rate: config.OMS_COMMISSION_RATE, minimum: config.OMS_MIN_COMMISSION },
      acceptTimeoutMs: config.OMS_ACCEPT_TIMEOUT_MS,
      // A pass that filled has settlement events waiting: sent now, not at the relay's next pass.
      afterFills: () => relay.wake(),
    },
    logger,
  );
  made.engine = engine;
  engine.start();
  life.defer('execution engine', () => engine.stop());
  return engine;
}

/** The simulated price feed: each step moves the prices, publishes the ticks and tells this instance's instruments cache. */
function startFeed(
  life: Lifecycle,
  config: OmsConfig,
  ds: DataSource,
  events: EventLog,
  repriced: (symbols: readonly string[]) => void,
  logger: Logger,
): PriceFeed {
  const feed = new PriceFeed(
    ds,
    { seed: config.OMS_PRICE_SEED, volatility: config.OMS_PRICE_VOLATILITY, tickMs: config.OMS_PRICE_TICK_MS },
    logger,
    new MarketTicks(
      events,
      {
        stream: config.MARKET_TICKS_STREAM,
        streamMaxLen: config.MARKET_TICKS_STREAM_MAX_LEN,
        retentionDays: config.OMS_MARKET_TICK_RETENTION_DAYS,
        spread: config.OMS_QUOTE_SPREAD,
      },
      logger,
    ),
    repriced,
  );
  feed.start();
  life.defer('price feed', () => feed.stop());
  return feed;
}
