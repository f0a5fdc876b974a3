/**
 * An order's request budgets at the edge, two ways in one process against the same Redis: one
 * round trip per budget (token, user, then the token's and the user's order budgets: what the
 * edges did before round five in docs/benchmarks.md) and `BudgetChain` (the caller's budgets in one script,
 * the order's in one more: what `ApiLimits` does now). Prints orders per second, this process's CPU
 * and Redis's CPU per order for each, and the ratios.
 *
 *   npx tsx tools/bench/budget-chain.ts   (TEST_REDIS_URL, default redis://127.0.0.1:6379)
 */
import { randomUUID } from 'node:crypto';
import { BudgetChain, RequestLimiter, type ChainStep } from '@trading/rate-limit';
import { connectStore, RedisStore } from '@trading/redis';
import { NEVER_BINDS } from './processes';

const ORDERS = 20_000;
const IN_FLIGHT = 50;

type Way = 'one by one' | 'chained';
interface Figures {
  perSecond: number;
  cpuMicros: number;
  redisMicros: number;
}

/** Redis's own CPU so far (INFO cpu), in µs: the server's share of the work, which this process's figure leaves out. */
async function redisCpu(store: RedisStore): Promise<number> {
  const info = await store.client.info('cpu');
  const seconds = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6;
}

async function main(): Promise<void> {
  const store = await connectStore(process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379', {
    keyPrefix: `bench_budgets_${randomUUID()}:`,
  });
  if (!(store instanceof RedisStore)) throw new Error('This bench needs Redis (TEST_REDIS_URL)');
  const chain = BudgetChain.on(store)!;
  const budget = (name: string) => new RequestLimiter(store, 'bench', { name, perMinute: NEVER_BINDS });
  const [token, user, orders, userOrders] = ['token', 'user', 'orders', 'user-orders'].map(budget) as [
    RequestLimiter,
    RequestLimiter,
    RequestLimiter,
    RequestLimiter,
  ];

  const charge: Record<Way, (n: number) => Promise<unknown>> = {
    'one by one': async (n) => {
      for (const [limiter, key] of [
        [token, `pat:${n % 50}`],
        [user, `user:${n % 25}`],
        [orders, `pat:${n % 50}`],
        [userOrders, `user:${n % 25}`],
      ] as const)
        await limiter.take(key);
    },
    chained: async (n) => {
      const caller: ChainStep[] = [
        { limiter: token, key: `pat:${n % 50}` },
        { limiter: user, key: `user:${n % 25}` },
      ];
      await chain.take(caller, 1, false);
      await chain.take(
        [
          { limiter: orders, key: `pat:${n % 50}` },
          { limiter: userOrders, key: `user:${n % 25}` },
        ],
        1,
        false,
      );
    },
  };

  const measure = async (way: Way): Promise<Figures> => {
    let next = 0;
    const redisBefore = await redisCpu(store);
    const started = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < ORDERS) await charge[way](next++);
      }),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const used = process.cpuUsage(cpu);
    const redisUsed = (await redisCpu(store)) - redisBefore;
    return { perSecond: ORDERS / seconds, cpuMicros: (used.user + used.system) / ORDERS, redisMicros: redisUsed / ORDERS };
  };

  const results: Record<Way, Figures[]> = { 'one by one': [], chained: [] };
  // Alternated, after one warm-up round each, so that neither way gets the quieter moment.
  for (const round of [0, 1, 2, 3])
    for (const way of ['one by one', 'chained'] as const) {
      const r = await measure(way);
      if (round > 0) results[way].push(r);
    }
  await store.close();
  const mean = (rs: Figures[]): Figures => ({
    perSecond: rs.reduce((s, r) => s + r.perSecond, 0) / rs.length,
    cpuMicros: rs.reduce((s, r) => s + r.cpuMicros, 0) / rs.length,
    redisMicros: rs.reduce((s, r) => s + r.redisMicros, 0) / rs.length,
  });
  const before = mean(results['one by one']);
  const after = mean(results.chained);
  for (const [name, r] of [
    ['one by one (4 round trips)', before],
    ['chained (2 round trips)', after],
  ] as const)
    console.log(
      `${name.padEnd(27)} ${r.perSecond.toFixed(0).padStart(6)} orders/s  ${r.cpuMicros.toFixed(0).padStart(4)} µs CPU here  ${r.redisMicros.toFixed(0).padStart(4)} µs in Redis, per order`,
    );
  console.log(
    `chained ÷ one by one: ${(after.perSecond / before.perSecond).toFixed(2)}× the rate, ${(after.cpuMicros / before.cpuMicros).toFixed(2)}× the CPU here, ${(after.redisMicros / before.redisMicros).toFixed(2)}× Redis's`,
  );
}

void main();
