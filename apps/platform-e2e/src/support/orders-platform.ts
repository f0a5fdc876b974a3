import type { DataSource } from 'typeorm';
import { http } from '@trading/testing';
import type { PlatformOverrides } from '@trading/platform';
import { startTestPlatform, type TestPlatform } from './test-platform';

/**
 * The whole product in process, as startTestPlatform starts it, with the paper market under
 * the test's control: the price feed paused (prices move only by `setPrice`), a fast engine
 * and relay, and `liquidity` per instrument per engine pass.
 */
export function startOrdersPlatform(
  oms: Record<string, string> = {},
  env: Record<string, string> = {},
  more: Omit<PlatformOverrides, 'oms'> = {},
): Promise<TestPlatform> {
  // The lifecycle specs' arithmetic is the rate alone and their resting orders sit far from the
  // market: no minimum commission, no price band here (orders-rules.spec.ts covers both).
  const rules = { OMS_MIN_COMMISSION: '0', OMS_PRICE_BAND: '100' };
  return startTestPlatform(env, {
    ...more,
    oms: { OMS_PRICE_TICK_MS: '0', OMS_ENGINE_INTERVAL_MS: '50', OMS_RELAY_INTERVAL_MS: '25', ...rules, ...oms },
  });
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
  const res = await http('POST', `${p.urls.api}/banking/deposit`, {
    token,
    body: { accountId, amount, currency, sandboxOutcome: 'COMPLETED' },
  });
  if (res.status !== 201) throw new Error(`deposit failed: ${res.status} ${JSON.stringify(res.body)}`);
  await until(
    () => http('GET', `${p.urls.api}/banking/${accountId}/txn-activity?limit=1`, { token }),
    (r) => r.body.transactions?.[0]?.state === 'COMPLETED',
    'the deposit to clear',
  );
}

/**
 * Runs `action` while recording every statement `dataSource` sends (the real DataSource, only
 * observed), through TypeORM or prepared on its pool (queryPrepared). Every argument is passed on: a transaction's own queries carry its query runner,
 * and one dropped here would run on another connection, outside the transaction, and wait for
 * the transaction's own row locks for ever (a relay pass hung that way once, and with it the
 * whole OMS's shutdown).
 */
export async function recordingStatements<T>(
  dataSource: DataSource,
  action: () => Promise<T>,
): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const original = dataSource.query;
  dataSource.query = ((...args: Parameters<DataSource['query']>) => {
    statements.push(args[0]);
    return original.apply(dataSource, args);
  }) as DataSource['query'];
  // Prepared statements (queryPrepared) go to the pool itself, as { name, text, values }.
  const pool = (dataSource.driver as unknown as { master: { query: (...args: unknown[]) => unknown } }).master;
  const poolQuery = pool.query;
  pool.query = (...args: unknown[]) => {
    const first = args[0] as string | { text?: string };
    statements.push(typeof first === 'string' ? first : (first.text ?? ''));
    return poolQuery.apply(pool, args);
  };
  try {
    return { result: await action(), statements };
  } finally {
    dataSource.query = original;
    pool.query = poolQuery;
  }
}
