/**
 * Throwaway Redis topologies on loopback, started from the installed `redis-server`: a Redis
 * Cluster of several primaries, or a primary with a replica and three Sentinels. Each process
 * gets a port that is free now and a data directory of its own; `stop()` kills them all and
 * removes the directories. The machine's own Redis is never touched.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });

const handedOut = new Set<number>();

/**
 * A free port between 22000 and 25000, with its cluster bus port (+10000) free too: below
 * libs/testing's range (25000 up, which this library cannot import) and above
 * tools/scale-out's fixed ports, and never one an outgoing connection can take meanwhile.
 */
async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const port = 22_000 + Math.floor(Math.random() * 3000);
    if (handedOut.has(port) || !(await canListen(port)) || !(await canListen(port + 10_000))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('no free port pair for a Redis node');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function cli(port: number, ...args: string[]): string {
  const out = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', timeout: 10_000 });
  return `${out.stdout ?? ''}${out.stderr ?? ''}`;
}

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

class RedisProcesses {
  readonly dir = mkdtempSync(join(tmpdir(), 'redis-topology-'));
  private readonly running = new Map<number, ChildProcess>();

  start(port: number, ...args: string[]): void {
    const dir = join(this.dir, String(port));
    rmSync(dir, { recursive: true, force: true });
    spawnSync('mkdir', ['-p', dir]);
    const child = spawn(
      'redis-server',
      [...args, '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    this.running.set(port, child);
  }

  startSentinel(port: number, config: string): void {
    const file = join(this.dir, `sentinel-${port}.conf`);
    writeFileSync(file, `port ${port}\nbind 127.0.0.1\ndir ${this.dir}\n${config}\n`);
    this.running.set(port, spawn('redis-server', [file, '--sentinel'], { stdio: 'ignore' }));
  }

  async answering(port: number): Promise<void> {
    await until(`redis on ${port}`, () => cli(port, 'PING').includes('PONG'));
  }

  /** SIGSTOP / SIGCONT: the node hangs (its links stay open) and comes back. */
  signal(port: number, signal: 'SIGSTOP' | 'SIGCONT'): void {
    this.running.get(port)?.kill(signal);
  }

  /** kill -9: the node is gone without a word. */
  kill(port: number): void {
    this.running.get(port)?.kill('SIGKILL');
    this.running.delete(port);
  }

  async stop(): Promise<void> {
    const exits = [...this.running.values()].map(
      (child) => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve()))),
    );
    for (const child of this.running.values()) child.kill('SIGKILL');
    await Promise.all(exits);
    this.running.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface RedisClusterUnderTest {
  /** host:port of every primary, as REDIS_CLUSTER_NODES takes them. */
  nodes: string[];
  stop(): Promise<void>;
}

/** A Redis Cluster of `primaries` primaries (no replicas), every slot assigned, answering. */
export async function startRedisCluster(primaries = 3): Promise<RedisClusterUnderTest> {
  const processes = new RedisProcesses();
  try {
    const ports: number[] = [];
    for (let i = 0; i < primaries; i++) ports.push(await freePort());
    for (const port of ports)
      processes.start(port, '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000');
    for (const port of ports) await processes.answering(port);
    const nodes = ports.map((p) => `127.0.0.1:${p}`);
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    for (const port of ports) await until(`cluster state ok on ${port}`, () => cli(port, 'CLUSTER', 'INFO').includes('cluster_state:ok'));
    return { nodes, stop: () => processes.stop() };
  } catch (err) {
    await processes.stop();
    throw err;
  }
}

export interface RedisSentinelUnderTest {
  /** host:port of each Sentinel, as REDIS_SENTINELS takes them. */
  sentinels: string[];
  /** The name the Sentinels know the primary by. */
  name: string;
  primaryPort: number;
  replicaPort: number;
  /** kill -9 the primary at once (before returning); resolves once the Sentinels name the replica as primary. */
  killPrimary(): Promise<void>;
  /** The replica hangs (SIGSTOP), so the primary's link to it breaks and it hears nothing, and comes back (SIGCONT). */
  pauseReplica(): void;
  resumeReplica(): void;
  stop(): Promise<void>;
}

/** A primary, one replica and three Sentinels (quorum 2, a primary is down after 1 s). */
export async function startRedisSentinel(name = 'mymaster'): Promise<RedisSentinelUnderTest> {
  const processes = new RedisProcesses();
  try {
    const [primaryPort, replicaPort] = [await freePort(), await freePort()];
    processes.start(primaryPort);
    await processes.answering(primaryPort);
    processes.start(replicaPort, '--replicaof', '127.0.0.1', String(primaryPort));
    await processes.answering(replicaPort);
    await until('the replica in sync', () => cli(replicaPort, 'INFO', 'replication').includes('master_link_status:up'));
    const sentinelPorts = [await freePort(), await freePort(), await freePort()];
    const config = [
      `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 2`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 5000`,
      `sentinel parallel-syncs ${name} 1`,
    ].join('\n');
    for (const port of sentinelPorts) processes.startSentinel(port, config);
    for (const port of sentinelPorts) await processes.answering(port);
    await until('the Sentinels to see each other and the replica', () =>
      sentinelPorts.every((p) => {
        const out = cli(p, 'SENTINEL', 'MASTER', name);
        const field = (f: string) => Number(out.split('\n')[out.split('\n').findIndex((l) => l.trim() === f) + 1]);
        return field('num-other-sentinels') >= 2 && field('num-slaves') >= 1;
      }),
    );
    const primaryNamed = () => cli(sentinelPorts[0]!, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name).split('\n')[1]?.trim();
    return {
      sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`),
      name,
      primaryPort,
      replicaPort,
      killPrimary: () => {
        processes.kill(primaryPort);
        return until('the Sentinels to promote the replica', () => primaryNamed() === String(replicaPort), 30_000);
      },
      pauseReplica: () => processes.signal(replicaPort, 'SIGSTOP'),
      resumeReplica: () => processes.signal(replicaPort, 'SIGCONT'),
      stop: () => processes.stop(),
    };
  } catch (err) {
    await processes.stop();
    throw err;
  }
}
