import { join } from 'node:path';
import { createAccountsApp, type AccountsApp } from '@trading/accounts-service';
import { createAuthApp, type AuthApp } from '@trading/auth-service';
import { createBankingApp, type BankingApp } from '@trading/banking-service';
import { createGatewayApp } from '@trading/gateway-service';
import { createOmsApp, loadOmsConfig, type OmsApp } from '@trading/oms-service';
import { createRestFacadeApp } from '@trading/rest-facade-service';
import type { SettlementService } from './app';
import type { Launch, Started } from './launch';
import { ensureSecretFile, KEY_ENCRYPTION_KEY_FILE } from './admin-token';
import { DEMO_VENDOR_APP } from './demo-data';

/**
 * Each service of the all-in-one started in turn, wired to those before it: accounts, banking, the
 * OMS, auth, the gateway and the REST facade.
 */

export function startAccounts(l: Launch): Promise<SettlementService<AccountsApp>> {
  const { config } = l;
  const accountsDb = l.db('accounts');
  return l.startSettlementService({
    group: 'accounts',
    databaseUrl: accountsDb,
    listen: l.at(config.ACCOUNTS_PORT, config.ACCOUNTS_INTERNAL_PORT),
    create: (settlementConsumer) =>
      createAccountsApp(
        {
          ...l.common,
          ...l.identity('accounts'),
          ACCOUNTS_PORT: config.ACCOUNTS_PORT,
          ACCOUNTS_INTERNAL_PORT: config.ACCOUNTS_INTERNAL_PORT,
          ACCOUNTS_DATABASE_URL: accountsDb,
          ...l.database,
          ACCOUNTS_CACHE_ENTRIES: config.ACCOUNTS_CACHE_ENTRIES,
          ACCOUNT_CHANGES_STREAM: l.streams.accountChanges,
          SETTLEMENT_CLAIM_IDLE_MS: config.SETTLEMENT_CLAIM_IDLE_MS,
          EVENTS_STREAM: l.streams.events,
        },
        { logger: l.log('accounts'), events: l.events, settlementConsumer },
      ),
  });
}

export function startBanking(l: Launch, accounts: SettlementService<AccountsApp>): Promise<SettlementService<BankingApp>> {
  const { config } = l;
  const accountsGraphql = `${accounts.server.internal.url}/graphql`;
  const bankingDb = l.db('banking');
  return l.startSettlementService({
    group: 'banking',
    databaseUrl: bankingDb,
    listen: l.at(config.BANKING_PORT, config.BANKING_INTERNAL_PORT),
    create: (settlementConsumer) =>
      createBankingApp(
        {
          ...l.common,
          ...l.identity('banking'),
          BANKING_PORT: config.BANKING_PORT,
          BANKING_INTERNAL_PORT: config.BANKING_INTERNAL_PORT,
          BANKING_DATABASE_URL: bankingDb,
          ...l.database,
          ACCOUNTS_URL: accountsGraphql,
          BANKING_CLEARING_DELAY_MS: 3000,
          BANKING_CLEARING_POLL_MS: 250,
          BANKING_SANDBOX: true,
          BANKING_MAX_TRANSACTION_AMOUNT: '10000000',
          BANKING_SETTLEMENT_DAYS: config.BANKING_SETTLEMENT_DAYS,
          SETTLEMENT_CLAIM_IDLE_MS: config.SETTLEMENT_CLAIM_IDLE_MS,
          EVENTS_STREAM: l.streams.events,
        },
        { logger: l.log('banking'), events: l.events, settlementConsumer, accountsGraphql: l.inProcess(() => accounts.app?.graphql) },
      ),
  });
}

export async function startOms(
  l: Launch,
  accounts: SettlementService<AccountsApp>,
  banking: SettlementService<BankingApp>,
): Promise<Started<OmsApp>> {
  const { config } = l;
  const host = config.PLATFORM_BIND;
  const omsConfig = loadOmsConfig({
    LOG_LEVEL: config.LOG_LEVEL,
    REDIS_URL: config.REDIS_URL,
    LISTEN_HOST: host,
    INTERNAL_LISTEN_HOST: host,
    OMS_PORT: String(config.OMS_PORT),
    OMS_INTERNAL_PORT: String(config.OMS_INTERNAL_PORT),
    OMS_DATABASE_URL: l.db('oms'),
    ...(config.DB_STATEMENT_TIMEOUT_MS === undefined ? {} : { DB_STATEMENT_TIMEOUT_MS: String(config.DB_STATEMENT_TIMEOUT_MS) }),
    EVENTS_STREAM: l.streams.events,
    MARKET_TICKS_STREAM: l.streams.ticks,
    ACCOUNT_CHANGES_STREAM: l.streams.accountChanges,
    BANKING_URL: banking.server.internal.url,
    ACCOUNTS_URL: `${accounts.server.internal.url}/graphql`,
    OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: String(config.OMS_MAX_OPEN_ORDERS_PER_ACCOUNT),
    OMS_TRADING_HOURS: config.OMS_TRADING_HOURS,
    ...l.overrides.oms,
    // The schema takes key objects as well as JSON, so the launcher hands over the ones it made.
    ...(l.identity('oms') as unknown as Record<string, string>),
  });
  return l.started(
    await createOmsApp(omsConfig, { logger: l.log('oms'), events: l.events, accountsGraphql: l.inProcess(() => accounts.app?.graphql) }),
    l.at(config.OMS_PORT, config.OMS_INTERNAL_PORT),
  );
}

export async function startAuth(
  l: Launch,
  adminToken: string,
  accounts: SettlementService<AccountsApp>,
  banking: SettlementService<BankingApp>,
  oms: Started<OmsApp>,
): Promise<Started<AuthApp>> {
  const { config } = l;
  return l.started(
    await createAuthApp(
      {
        ...l.common,
        ...l.identity('auth'),
        AUTH_PORT: config.AUTH_PORT,
        AUTH_DATABASE_URL: l.db('auth'),
        ...l.database,
        AUTH_ISSUER: l.issuer,
        AUTH_API_URL: l.publicApi,
        AUTH_ADMIN_TOKEN: adminToken,
        AUTH_KEY_ENCRYPTION_KEY:
          config.AUTH_KEY_ENCRYPTION_KEY ?? ensureSecretFile(config.PLATFORM_DATA_DIR, KEY_ENCRYPTION_KEY_FILE, 'kek_'),
        PAT_SESSION_TTL_SECONDS: config.PAT_SESSION_TTL_SECONDS,
        PAT_MAX_LIVE_PER_USER: config.PAT_MAX_LIVE_PER_USER,
        OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT: config.OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT,
        // Its public listener spends the facade's address budget, in the same counters.
        OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE: config.OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE,
        API_RATE_LIMIT_NAMESPACE: l.edgeSettings.API_RATE_LIMIT_NAMESPACE,
        // One installation, one folder: its mail log lives beside its cluster and credentials.
        MAIL_LOG_FILE: join(config.PLATFORM_DATA_DIR, 'mail.log'),
        AUTH_TRUST_PROXY: [],
        ACCOUNTS_INTERNAL_URL: accounts.server.internal.url,
        BANKING_INTERNAL_URL: banking.server.internal.url,
        OMS_INTERNAL_URL: oms.server.internal.url,
        EVENTS_STREAM: l.streams.events,
        ...l.overrides.auth,
      },
      { logger: l.log('auth'), store: l.store, events: l.events },
    ),
    { ...l.at(config.AUTH_PORT, config.AUTH_INTERNAL_PORT), admin: { port: config.AUTH_ADMIN_PORT, host: '127.0.0.1' } },
  );
}

type GatewayApp = Awaited<ReturnType<typeof createGatewayApp>>;

export async function startGateway(
  l: Launch,
  accounts: SettlementService<AccountsApp>,
  banking: SettlementService<BankingApp>,
  oms: Started<OmsApp>,
  auth: Started<AuthApp>,
): Promise<Started<GatewayApp>> {
  const { config } = l;
  return l.started(
    await createGatewayApp(
      {
        ...l.common,
        ...l.identity('gateway'),
        ...l.edgeSettings,
        GATEWAY_PORT: config.GATEWAY_PORT,
        GATEWAY_INTERNAL_PORT: config.GATEWAY_INTERNAL_PORT,
        ACCOUNTS_URL: `${accounts.server.internal.url}/graphql`,
        BANKING_URL: `${banking.server.internal.url}/graphql`,
        OMS_URL: `${oms.server.internal.url}/graphql`,
        AUTH_JWKS_URL: `${auth.server.public.url}/.well-known/jwks.json`,
        AUTH_ISSUER: l.issuer,
        GATEWAY_PUBLIC_URL: [`http://localhost:${config.GATEWAY_PORT}/graphql`],
        SUPERGRAPH_PATH: require.resolve('./supergraph.graphql', {
          paths: [__dirname, `${__dirname}/../../../libs/gateway-service/src`],
        }), // bundle: copied next to main.js; source: the gateway's
        GATEWAY_TRUST_PROXY: [],
        GRAPHQL_INTROSPECTION: config.GRAPHQL_INTROSPECTION,
        GATEWAY_EXPLORER: config.GATEWAY_EXPLORER,
      },
      {
        logger: l.log('gateway'),
        store: l.store,
        subgraphs: config.PLATFORM_IN_PROCESS_CALLS
          ? { accounts: () => accounts.app?.graphql, banking: () => banking.app?.graphql, oms: () => oms.app.graphql }
          : undefined,
      },
    ),
    l.at(config.GATEWAY_PORT, config.GATEWAY_INTERNAL_PORT),
  );
}

export async function startFacade(l: Launch, auth: Started<AuthApp>, gateway: Started<GatewayApp>) {
  const { config } = l;
  const facade = l.overrides.facade ?? {};
  return l.started(
    await createRestFacadeApp(
      {
        ...l.common,
        ...l.identity('rest-facade'),
        ...l.edgeSettings,
        FACADE_PORT: config.FACADE_PORT,
        FACADE_INTERNAL_PORT: config.FACADE_INTERNAL_PORT,
        GATEWAY_URL: `${gateway.server.internal.url}/graphql`,
        AUTH_INTERNAL_URL: auth.server.internal.url,
        AUTH_JWKS_URL: `${auth.server.public.url}/.well-known/jwks.json`,
        AUTH_ISSUER: l.issuer,
        FACADE_PUBLIC_URL: [l.publicApi],
        FACADE_TRUST_PROXY: [],
        OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE: config.OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE,
        EVENTS_STREAM: l.streams.events,
        ORDER_EVENTS_HEARTBEAT_MS: facade.ORDER_EVENTS_HEARTBEAT_MS ?? 15_000,
        ORDER_EVENTS_MAX_STREAMS_PER_USER: facade.ORDER_EVENTS_MAX_STREAMS_PER_USER ?? 5,
        ORDER_EVENTS_REPLAY_MAX_ENTRIES: facade.ORDER_EVENTS_REPLAY_MAX_ENTRIES ?? 20_000,
        ORDER_EVENTS_REPLAYS_PER_MINUTE: facade.ORDER_EVENTS_REPLAYS_PER_MINUTE ?? 30,
        CORS_ORIGINS_CACHE_MS: facade.CORS_ORIGINS_CACHE_MS ?? 30_000,
        // The API docs' Authorize dialog signs in as the demo app (its redirect URI: demo-start.ts).
        DOCS_OAUTH_CLIENT_ID: config.PLATFORM_SEED_DEMO ? DEMO_VENDOR_APP.clientId : undefined,
        MARKET_TICKS_STREAM: l.streams.ticks,
        MARKET_EVENTS_HEARTBEAT_MS: facade.MARKET_EVENTS_HEARTBEAT_MS ?? 15_000,
        MARKET_EVENTS_MAX_STREAMS_PER_USER: facade.MARKET_EVENTS_MAX_STREAMS_PER_USER ?? 5,
        EVENT_STREAM_LEASE_MS: facade.EVENT_STREAM_LEASE_MS ?? 15_000,
      },
      {
        logger: l.log('rest-facade'),
        store: l.store,
        events: l.events,
        gateway: l.inProcess(() => gateway.app.graphql),
        auth: l.inProcess(() => auth.app.internal),
      },
    ),
    l.at(config.FACADE_PORT, config.FACADE_INTERNAL_PORT),
  );
}
