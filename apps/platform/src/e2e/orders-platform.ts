import { dropDatabase, withDatabaseName } from '@trading/db';
import { http, TEST_POSTGRES_URL, TEST_REDIS_URL, uniqueId } from '@trading/testing';
import { createPlatform, loadPlatformConfig, type PlatformOverrides } from '../app';
import type { TestPlatform } from './test-platform';

/**
 * The whole product in process, as startTestPlatform starts it, with the paper market under
 * the test's control: the price feed paused (prices move only by `setPrice`), a fast engine
 * and relay, and `liquidity` per instrument per engine pass.
 */
export async function startOrdersPlatform(oms: Record<string, string> = {}, env: Record<string, string> = {}): Promise<TestPlatform> {
  const prefix = `t_${uniqueId()}_`;
  const config = loadPlatformConfig({
    DATABASE_URL: TEST_POSTGRES_URL,
    REDIS_URL: TEST_REDIS_URL,
    PLATFORM_DB_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    FACADE_PORT: '0',
    AUTH_PORT: '0',
    GATEWAY_PORT: '0',
    ACCOUNTS_PORT: '0',
    BANKING_PORT: '0',
    OMS_PORT: '0',
    ...env,
  });
  const overrides: PlatformOverrides = { oms: { OMS_PRICE_TICK_MS: '0', OMS_ENGINE_INTERVAL_MS: '50', OMS_RELAY_INTERVAL_MS: '25', ...oms } };
  const platform = await createPlatform(config, undefined, overrides);
  return {
    ...platform,
    config,
    stop: async () => {
      await platform.close();
      for (const service of ['auth', 'accounts', 'banking', 'oms']) await dropDatabase(withDatabaseName(TEST_POSTGRES_URL, prefix + service));
    },
  };
}

/** Polls `read` until `done` holds (about 20 s at most). */
export async function until<T>(read: () => Promise<T>, done: (t: T) => boolean, what: string): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < 200; i++) {
    last = await read();
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last).slice(0, 600)}`);
}

/** Deposits and waits for the simulated clearing to complete it (sandbox outcome COMPLETED). */
export async function fund(p: TestPlatform, token: string, accountId: string, amount: string, currency = 'USD'): Promise<void> {
  const res = await http('POST', `${p.urls.api}/banking/deposit`, { token, body: { accountId, amount, currency, sandboxOutcome: 'COMPLETED' } });
  if (res.status !== 201) throw new Error(`deposit failed: ${res.status} ${JSON.stringify(res.body)}`);
  await until(() => http('GET', `${p.urls.api}/banking/${accountId}/txn-activity?limit=1`, { token }), (r) => r.body.transactions?.[0]?.state === 'COMPLETED', 'the deposit to clear');
}
