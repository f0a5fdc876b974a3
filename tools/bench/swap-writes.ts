/**
 * A refresh's Redis writes, two ways in one process against the same Redis: the swap followed by
 * the session, its grant index and the retry answer as separate commands (as before round
 * three in docs/benchmarks.md), and the swap carrying them (`KeyValueStore.swap`'s also-writes, what auth does
 * now). Prints rotations per second and this process's CPU per rotation for each, and the ratio.
 *
 *   npx tsx tools/bench/swap-writes.ts   (TEST_REDIS_URL, default redis://127.0.0.1:6379)
 */
import { randomUUID } from 'node:crypto';
import { connectStore, type KeyValueStore } from '@trading/redis';

const ROTATIONS = 4000;
const IN_FLIGHT = 32;
const RECORD = 'x'.repeat(600); // about a sealed refresh record's size

type Way = 'separate' | 'carried';

async function rotate(store: KeyValueStore, way: Way, n: number): Promise<void> {
  await store.swap(`rt:${way}:${n}`, `rt-next:${way}:${n}`, RECORD, 60, way === 'carried' ? writes(way, n) : undefined);
  if (way === 'carried') return;
  const { values, members } = writes(way, n);
  await Promise.all([store.set(values[0]!.key, RECORD, 60), store.addToSet(members[0]!.key, members[0]!.member, 60)]);
  await store.set(values[1]!.key, RECORD, 61);
}

const writes = (way: Way, n: number) => ({
  values: [
    { key: `session:${way}:${n}`, value: RECORD, ttlSeconds: 60 },
    { key: `answer:${way}:${n}`, value: RECORD, ttlSeconds: 61 },
  ],
  members: [{ key: `grant-sessions:${way}:${n % 32}`, member: `sid-${n}`, ttlSeconds: 60 }],
});

async function measure(store: KeyValueStore, way: Way): Promise<{ perSecond: number; cpuMicros: number }> {
  for (let n = 0; n < ROTATIONS; n++) await store.set(`rt:${way}:${n}`, RECORD, 60);
  let next = 0;
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < ROTATIONS) await rotate(store, way, next++);
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  return { perSecond: ROTATIONS / seconds, cpuMicros: (used.user + used.system) / ROTATIONS };
}

async function main(): Promise<void> {
  const store = await connectStore(process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379', {
    keyPrefix: `bench_swap_${randomUUID()}:`,
  });
  const results: Record<Way, Array<{ perSecond: number; cpuMicros: number }>> = { separate: [], carried: [] };
  // Alternated, after one warm-up round each, so that neither way gets the quieter moment.
  for (const round of [0, 1, 2, 3])
    for (const way of ['separate', 'carried'] as const) {
      const r = await measure(store, way);
      if (round > 0) results[way].push(r);
    }
  await store.close();
  const mean = (rs: Array<{ perSecond: number; cpuMicros: number }>) => ({
    perSecond: rs.reduce((s, r) => s + r.perSecond, 0) / rs.length,
    cpuMicros: rs.reduce((s, r) => s + r.cpuMicros, 0) / rs.length,
  });
  const separate = mean(results.separate);
  const carried = mean(results.carried);
  for (const [name, r] of [
    ['separate commands', separate],
    ['carried by the swap', carried],
  ] as const)
    console.log(`${name.padEnd(20)} ${r.perSecond.toFixed(0).padStart(6)} rotations/s  ${r.cpuMicros.toFixed(0).padStart(4)} µs CPU each`);
  console.log(
    `carried ÷ separate: ${(carried.perSecond / separate.perSecond).toFixed(2)}× the rate, ${(carried.cpuMicros / separate.cpuMicros).toFixed(2)}× the CPU`,
  );
}

void main();
