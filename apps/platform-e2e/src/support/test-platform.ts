import { dropDatabase, withDatabaseName } from '@trading/db';
import { TEST_POSTGRES_URL, TEST_REDIS_URL, uniqueId } from '@trading/testing';
import type { AccountsApp } from '@trading/accounts-service';
import type { BankingApp } from '@trading/banking-service';
import { createPlatform, loadPlatformConfig, type Platform, type PlatformConfig, type PlatformOverrides } from '@trading/platform';
import { crashableServices, type CrashableService } from './crashable-services';

export interface TestPlatform extends Platform {
  config: PlatformConfig;
  /** Accounts and banking, which crash tests kill and start again. */
  services: { banking: CrashableService<BankingApp>; accounts: CrashableService<AccountsApp> };
  stop(): Promise<void>;
}

/** Every app in this process on free ports, against the test PostgreSQL and Redis, databases named `<prefix>auth`, …. */
function inProcessPlatformConfig(prefix: string, env: Record<string, string> = {}): PlatformConfig {
  return loadPlatformConfig({
    DATABASE_URL: TEST_POSTGRES_URL,
    REDIS_URL: TEST_REDIS_URL,
    // TEST_REDIS_CLUSTER_NODES (host:port,…): the platform on a Redis Cluster instead.
    ...(process.env['TEST_REDIS_CLUSTER_NODES'] ? { REDIS_CLUSTER_NODES: process.env['TEST_REDIS_CLUSTER_NODES'] } : {}),
    PLATFORM_DB_PREFIX: prefix,
    LOG_LEVEL: process.env['E2E_LOG_LEVEL'] ?? 'silent', // E2E_LOG_LEVEL=warn shows the apps' own logs when a spec fails
    FACADE_PORT: '0',
    AUTH_PORT: '0',
    GATEWAY_PORT: '0',
    ACCOUNTS_PORT: '0',
    BANKING_PORT: '0',
    OMS_PORT: '0',
    // Internal ports too: several platforms run side by side in one test run.
    FACADE_INTERNAL_PORT: '0',
    AUTH_INTERNAL_PORT: '0',
    GATEWAY_INTERNAL_PORT: '0',
    ACCOUNTS_INTERNAL_PORT: '0',
    BANKING_INTERNAL_PORT: '0',
    OMS_INTERNAL_PORT: '0',
    AUTH_ADMIN_PORT: '0',
    // Specs drive many calls per token and address; api-limits.spec turns them on.
    API_RATE_LIMIT_PER_MINUTE: '0',
    API_ORDER_RATE_LIMIT_PER_MINUTE: '0',
    API_ADDRESS_RATE_LIMIT_PER_MINUTE: '0',
    API_APP_RATE_LIMIT_PER_MINUTE: '0',
    OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE: '0',
    AUTH_ADMIN_TOKEN: `adm_test_${uniqueId()}_${uniqueId()}`,
    AUTH_KEY_ENCRYPTION_KEY: `kek_test_${uniqueId()}_${uniqueId()}_${uniqueId()}`,
    ...env,
  });
}

/** The whole product in this process on free ports, with throwaway databases on the test server. */
export async function startTestPlatform(env: Record<string, string> = {}, overrides: PlatformOverrides = {}): Promise<TestPlatform> {
  const prefix = `t_${uniqueId()}_`;
  const config = inProcessPlatformConfig(prefix, env);
  const crashable = crashableServices();
  const platform = await createPlatform(config, undefined, { ...overrides, startSettlementService: crashable.start });
  return {
    ...platform,
    services: { banking: crashable.started.banking!, accounts: crashable.started.accounts! },
    config,
    stop: async () => {
      await platform.close();
      for (const service of ['auth', 'accounts', 'banking', 'oms'])
        await dropDatabase(withDatabaseName(TEST_POSTGRES_URL, prefix + service));
    },
  };
}

export const inDays = (days: number) => new Date(Date.now() + days * 86400_000).toISOString().slice(0, 10);
