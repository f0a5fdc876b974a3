/**
 * The Redis Cluster half of the proof: the end-to-end suites that lean on Redis (sessions and
 * revocation, refresh rotation and its races, rate budgets, event streams and settlement) run
 * against a cluster of three primaries this run starts, through the platform's own
 * REDIS_CLUSTER_NODES (the test platform takes it from TEST_REDIS_CLUSTER_NODES). A multi-key
 * script or transaction whose keys span slots fails them with CROSSSLOT.
 */
import { spawnSync } from 'node:child_process';
import { startRedisCluster } from '@trading/redis/testing';

/** The e2e suites run again against a Redis Cluster (paths under apps/platform-e2e/src). */
export const CLUSTER_SUITES = [
  'pat/pat-lifecycle',
  'pat/pat-path',
  'oauth/oauth-refresh-binding',
  'oauth/oauth-grant-cache',
  'api/api-budgets',
  'orders/order-events',
  'api/stream-slots',
  'banking/settlement-stream-loss',
];

export interface SuitesResult {
  passed: number;
  failed: number;
  /** Jest's own exit status: 0 when every suite ran and passed. */
  status: number | null;
  /** The end of Jest's output, for a failure. */
  tail: string;
}

export async function suitesOnCluster(root: string): Promise<SuitesResult> {
  const cluster = await startRedisCluster(3);
  try {
    const run = spawnSync(
      'npx',
      ['jest', '-c', 'apps/platform-e2e/jest.config.js', '--runInBand', ...CLUSTER_SUITES.map((s) => `apps/platform-e2e/src/${s}.spec.ts`)],
      {
        cwd: root,
        env: { ...process.env, TEST_REDIS_CLUSTER_NODES: cluster.nodes.join(',') },
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    const out = `${run.stdout}${run.stderr}`;
    const tests = /^Tests:\s+(.*)$/m.exec(out)?.[1] ?? '';
    const count = (word: string) => Number(new RegExp(`(\\d+) ${word}`).exec(tests)?.[1] ?? 0);
    return { passed: count('passed'), failed: count('failed'), status: run.status, tail: out.trimEnd().split('\n').slice(-40).join('\n') };
  } finally {
    await cluster.stop();
  }
}
