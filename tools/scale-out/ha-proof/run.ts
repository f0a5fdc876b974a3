/**
 * The data tier loses a node and the platform carries on, shown on this machine: two instances
 * of every app behind HAProxy, PostgreSQL as a primary with a synchronous standby behind one
 * read-write address (HAProxy, TCP), and Redis as a primary, a replica and three Sentinels.
 * Under a steady load of reads, deposits and market orders that fill and settle, it:
 *   1. kills the PostgreSQL primary for good (kill -9 of every process; its WAL sender was
 *      paused a moment before, so commits in flight were not on the standby yet),
 *      promotes the standby and points HAProxy at it, as an operator would; then checks that the
 *      platform answers again within 15 s and that every write acknowledged before, during and
 *      after is in the databases exactly once, the ledger balanced and no cash held;
 *   2. kills the Redis primary (Sentinel promotes the replica), a PAT revoked 50 ms before; then
 *      checks that the platform answers within 10 s, the revoked PAT stays refused on every
 *      facade, the budgets keep counting, an open event stream ends or says `event: gap`, and
 *      every acknowledged order settles once.
 *   3. runs the Redis-dependent end-to-end suites against a Redis Cluster of three primaries
 *      (`cluster.ts`).
 * Prints a table and `ha-proof: ok`, or the failures (exit status 1).
 *
 * Settings: HA_PROOF_PORT_BASE (20000), HA_PROOF_KEEP_LOGS=1, HA_PROOF_SKIP_CLUSTER=1,
 * HA_PROOF_ASYNC_STANDBY=1 (the standby is not synchronous: the check that no acknowledged
 * write is lost should then fail).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startRedisSentinel, type RedisSentinelUnderTest } from '@trading/redis/testing';
import { createUser, fund, http, listInstrument, type Urls, type WorldUser } from '@trading/testing';
import { Databases, invariantProblems, progress, settledNow } from '../checks';
import { HaProxy } from '../haproxy';
import { steadyLoad, type LoadResult } from '../load';
import { PrivatePostgres } from '../postgres';
import { printTable, Report } from '../report';
import { portFree, sleep, waitFor } from '../processes';
import { buildBundles, DATABASES, dbName, Ports, Services, type AppName, type RedisService } from '../services';
import { CLUSTER_SUITES, suitesOnCluster } from './cluster';
import { eventStream, missingWrites } from './observe';
import { retriedWrites, type WriteTally } from './writes';

const ROOT = resolve(__dirname, '../../..');
const STREAM = 'ha:oms:events';
const SYNC = process.env['HA_PROOF_ASYNC_STANDBY'] !== '1';
/** The budgets count (high enough that the load never meets them): the proof checks they still count after Redis fails over. */
const BUDGETS = {
  API_RATE_LIMIT_PER_MINUTE: '100000',
  API_ORDER_RATE_LIMIT_PER_MINUTE: '100000',
  API_ADDRESS_RATE_LIMIT_PER_MINUTE: '100000',
};

interface Row {
  check: string;
  servedAgain: string;
  writes: number | string;
  lost: number | string;
  result: string;
}
const rows: Row[] = [];
const report = new Report();
const { problems, check, step } = report;

/** The read-write address: HAProxy's TCP frontend, in front of whichever node is the primary now. */
class ReadWriteAddress {
  constructor(readonly port: number) {}
  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }
  /** HAProxy's section: the primary in service, the standby held back until it is promoted. */
  haproxySection(primary: PrivatePostgres, standby: PrivatePostgres): string[] {
    return [
      'listen postgres',
      '  mode tcp',
      `  bind 127.0.0.1:${this.port}`,
      // Pooled connections sit idle for long stretches; LISTEN connections idle for ever.
      '  timeout client 1h',
      '  timeout server 1h',
      `  server primary 127.0.0.1:${primary.port} check on-marked-down shutdown-sessions`,
      `  server standby 127.0.0.1:${standby.port} check disabled on-marked-down shutdown-sessions`,
      '',
    ];
  }
}

/** Redis behind Sentinels, as each app connects to it (no ACL users here: the topology is under test, not the ACLs). */
class SentinelRedis implements RedisService {
  readonly stream = STREAM;
  constructor(private readonly redis: RedisSentinelUnderTest) {}
  env(_app: AppName): Record<string, string> {
    return {
      REDIS_URL: `redis://127.0.0.1:${this.redis.primaryPort}`,
      REDIS_SENTINELS: this.redis.sentinels.join(','),
      REDIS_SENTINEL_NAME: this.redis.name,
    };
  }
}

async function main(): Promise<void> {
  const ports = new Ports(Number(process.env['HA_PROOF_PORT_BASE'] ?? 20000));
  const [standbyPort, readWritePort] = [ports.base + 303, ports.base + 304];
  const busy = [];
  for (const port of [...ports.all(), standbyPort, readWritePort]) if (!(await portFree(port))) busy.push(port);
  if (busy.length) throw new Error(`ports in use: ${busy.join(', ')} (set HA_PROOF_PORT_BASE)`);

  step('build the bundles');
  buildBundles(ROOT);

  const dir = mkdtempSync(join(tmpdir(), 'ha-proof-'));
  chmodSync(dir, 0o711); // as root, PostgreSQL runs as the postgres user and must reach its own directory
  const primary = new PrivatePostgres(dir, ports.postgres(), 'primary');
  const standby = new PrivatePostgres(dir, standbyPort, 'standby');
  const readWrite = new ReadWriteAddress(readWritePort);
  let redis: RedisSentinelUnderTest | undefined;
  let services: Services | undefined;
  let haproxy: HaProxy | undefined;
  let db: Databases | undefined;
  try {
    await startPostgres(primary, standby);

    step('Redis: a primary, a replica and three Sentinels');
    redis = await startRedisSentinel('trading');
    console.log(`  primary :${redis.primaryPort}, replica :${redis.replicaPort}, Sentinels ${redis.sentinels.join(' ')}`);

    services = new Services(ROOT, dir, ports, readWrite, new SentinelRedis(redis), BUDGETS);
    haproxy = HaProxy.forServices(dir, services, readWrite.haproxySection(primary, standby));
    step('HAProxy (the read-write address and every app), then two instances of every app');
    await haproxy.start();
    for (const x of services.instances) services.start(x);
    await Promise.all(services.instances.map((x) => services!.waitReady(x, 120_000)));
    for (const x of services.instances) await haproxy.waitUp(x);
    db = new Databases(readWrite);

    const urls: Urls = { api: `${services.lb('rest-facade')}/v1`, login: services.lb('auth'), admin: `http://127.0.0.1:${ports.admin(0)}` };
    const user = await createUser(urls, services.adminToken, 'ha');
    const symbol = await listInstrument(urls, services.adminToken, '10.00');
    await fund(urls, user, '1000000');

    await postgresPrimaryLost({ primary, standby, haproxy, db, urls, user, symbol });
    await redisPrimaryLost({ redis, services, db, urls, user, symbol });
  } finally {
    await db?.end().catch(() => undefined);
    await haproxy?.stop();
    await services?.killAll();
    await redis?.stop();
    primary.stop();
    standby.stop();
    if (problems.length || process.env['HA_PROOF_KEEP_LOGS'] === '1') console.log(`\nlogs: ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

/** The primary with the platform's databases, then its standby streaming (synchronous unless HA_PROOF_ASYNC_STANDBY). */
async function startPostgres(primary: PrivatePostgres, standby: PrivatePostgres): Promise<void> {
  step(`PostgreSQL: a primary and a ${SYNC ? 'synchronous' : 'NOT synchronous (HA_PROOF_ASYNC_STANDBY)'} standby`);
  primary.init(['synchronous_commit = on']);
  primary.start();
  for (const name of DATABASES) primary.createDatabase(dbName(name));
  // Promoted, the standby has no standby of its own: it must not wait for one.
  standby.initStandbyOf(primary, 'standby', ["synchronous_standby_names = ''"]);
  standby.start();
  // Only now that the standby exists may a commit wait for it.
  if (SYNC) {
    primary.sql("ALTER SYSTEM SET synchronous_standby_names = 'standby'");
    primary.sql('SELECT pg_reload_conf()');
  }
  await waitFor('the standby streaming', 30_000, () =>
    (SYNC ? /^sync$/ : /^async$/).test(primary.sql("SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby'")),
  );
  console.log(`  standby streaming (${primary.sql("SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby'")})`);
}

async function redisCluster(): Promise<void> {
  step(`Redis Cluster (three primaries): the Redis-dependent suites against it (${CLUSTER_SUITES.join(', ')})`);
  const startedAt = Date.now();
  const result = await suitesOnCluster(ROOT);
  const ok = check(
    result.status === 0 && result.failed === 0 && result.passed > 0,
    `${result.passed} tests passed, ${result.failed} failed on the cluster${result.status === 0 ? '' : `\n${result.tail}`}`,
  );
  rows.push({
    check: 'Redis Cluster: sessions, rotation, budgets, streams, settlement',
    servedAgain: `${Math.round((Date.now() - startedAt) / 1000)} s to run`,
    writes: `${result.passed} tests`,
    lost: result.failed,
    result: ok ? 'ok' : 'FAIL',
  });
}

interface World {
  db: Databases;
  urls: Urls;
  user: WorldUser;
  symbol: string;
}

/** Load that runs across a failover: reads through the load balancer, and writes a client retries. */
function startLoad({ urls, user, symbol }: World) {
  const reads = steadyLoad(
    urls.api.replace(/\/v1$/, ''),
    user.session,
    ['/v1/accounts', `/v1/banking/${user.accounts[0]}/balance/USD`],
    20,
  );
  const writes = retriedWrites(urls.api, user.session, user.accounts, symbol);
  return {
    writes: writes.tally,
    async stop(): Promise<{ reads: LoadResult; writes: WriteTally }> {
      return { reads: await reads.stop(), writes: await writes.stop() };
    },
  };
}

/** Ms from `since` until a read of the user's balance answers 200. */
async function servedAgainAfter(since: number, urls: Urls, user: WorldUser, timeoutMs: number): Promise<number> {
  await waitFor('a read to be answered again', timeoutMs, async () => {
    const res = await fetch(`${urls.api}/banking/${user.accounts[0]}/balance/USD`, {
      headers: { authorization: `Bearer ${user.session}` },
      signal: AbortSignal.timeout(2000),
    });
    await res.arrayBuffer();
    return res.status === 200;
  });
  return Date.now() - since;
}

/** After the load: every acknowledged write there once, settlement caught up, the money invariants whole. */
async function writesKept(world: World, writes: WriteTally): Promise<number> {
  await waitFor('settlement to catch up', 90_000, async () => settledNow(await progress(world.db)));
  const missing = await missingWrites(world.db, writes.acknowledged);
  check(
    !missing.length,
    `${writes.acknowledged.length} acknowledged writes (${writes.acknowledged.filter((w) => w.kind === 'deposit').length} deposits, ${writes.acknowledged.filter((w) => w.kind === 'order').length} orders), each there exactly once${missing.length ? `: ${missing.length} not: ${missing.slice(0, 5).join('; ')}` : ''}`,
  );
  check(
    writes.broken === 0,
    `no write answered 5xx without Retry-After (${writes.broken}); ${writes.retriesAsked} asked to retry, ${writes.unanswered} unanswered, all retried with their key`,
  );
  check(
    writes.abandoned === 0,
    `no write left unacknowledged at the end (${writes.abandoned}); refused: ${JSON.stringify(writes.refused)}`,
  );
  const found = await invariantProblems(world.db);
  check(!found.length, `the ledger balances, no cash stays held, every holding is its fills ${found.join('; ')}`);
  return missing.length;
}

async function postgresPrimaryLost(world: World & { primary: PrivatePostgres; standby: PrivatePostgres; haproxy: HaProxy }) {
  step('PostgreSQL primary lost for good, under load; the standby promoted');
  const { primary, standby, haproxy } = world;
  const load = startLoad(world);
  await sleep(3000);
  // The primary stops sending WAL for a moment (its sender hangs): what commits now is on the
  // primary alone, unless commits wait for the standby (then they are not acknowledged, and the
  // client retries them on the promoted standby).
  const sender = Number(primary.sql("SELECT pid FROM pg_stat_replication WHERE application_name = 'standby'"));
  process.kill(sender, 'SIGSTOP');
  await sleep(1000);
  const killedAt = Date.now();
  primary.killNode(); // the hung sender with it
  standby.promote();
  await haproxy.command('set server postgres/standby state ready');
  await haproxy.command('set server postgres/primary state maint');
  console.log(`  primary killed, standby promoted and in service after ${Date.now() - killedAt} ms`);
  const served = await servedAgainAfter(killedAt, world.urls, world.user, 60_000).catch(() => NaN);
  await waitFor('a write acknowledged after the kill', 60_000, () => load.writes.acknowledged.some((w) => w.at > killedAt)).catch(
    () => undefined,
  );
  const firstWrite = (load.writes.acknowledged.find((w) => w.at > killedAt)?.at ?? NaN) - killedAt;
  await sleep(3000);
  const { reads, writes } = await load.stop();
  check(
    served <= 15_000 && firstWrite <= 15_000,
    `reads answered again after ${served} ms, the first write acknowledged after ${firstWrite} ms (within 15 s)`,
  );
  check(!reads.codes['500'], `no read answered 500 meanwhile (${JSON.stringify(reads.codes)})`);
  const lost = await writesKept(world, writes);
  rows.push({
    check: 'PostgreSQL primary killed, standby promoted',
    servedAgain: `${served} ms (writes ${firstWrite} ms)`,
    writes: writes.acknowledged.length,
    lost,
    result: problems.length ? 'FAIL' : 'ok',
  });
}

async function redisPrimaryLost(world: World & { redis: RedisSentinelUnderTest; services: Services }) {
  step('Redis primary lost, under load; Sentinel promotes the replica');
  const { redis, services, urls } = world;
  const before = problems.length;
  const facades = services.of('rest-facade');
  const budgetUser = await createUser(urls, services.adminToken, 'budget');
  const revoked = await revokedPatSession(services, urls);
  const events = eventStream(`${facades[1]!.publicUrl}/v1/oms/${world.user.accounts[0]}/events`, world.user.session);
  const load = startLoad(world);
  await sleep(3000);
  const revokedAt = Date.now();
  await revoked.revoke();
  await sleep(Math.max(0, 50 - (Date.now() - revokedAt)));
  const killedAt = Date.now();
  await redis.killPrimary();
  console.log(`  Sentinels promoted the replica after ${Date.now() - killedAt} ms`);
  const served = await servedAgainAfter(killedAt, urls, world.user, 60_000).catch(() => NaN);
  await sleep(3000);
  const { reads, writes } = await load.stop();
  check(served <= 10_000, `answered again ${served} ms after the kill (within 10 s)`);
  check(!reads.codes['500'], `no read answered 500 meanwhile (${JSON.stringify(reads.codes)})`);

  const refusals = await Promise.all(
    facades.map(async (f) => (await http('GET', `${f.publicUrl}/v1/accounts`, { token: revoked.session })).status),
  );
  check(
    revoked.revokedStatus === 200 && refusals.every((s) => s === 401),
    `the PAT session revoked 50 ms before the kill (${revoked.revokedStatus}) stays refused on every facade (${refusals.join(', ')})`,
  );
  const remaining = async () =>
    Number((await http('GET', `${facades[0]!.publicUrl}/v1/accounts`, { token: budgetUser.session })).headers.get('ratelimit-remaining'));
  const [first, second] = [await remaining(), await remaining()];
  check(
    Number.isFinite(first) && second === first - 1,
    `the budgets keep counting after the failover (remaining ${first}, then ${second})`,
  );
  const stream = await events.end(15_000);
  check(
    stream.ended || stream.gap,
    `the open event stream ${stream.gap ? 'said event: gap' : stream.ended ? 'ended' : 'neither ended nor said gap'} (HTTP ${stream.status}, ${stream.events} events)`,
  );
  const lost = await writesKept(world, writes);
  rows.push({
    check: 'Redis primary killed, Sentinel promoted the replica',
    servedAgain: `${served} ms`,
    writes: writes.acknowledged.length,
    lost,
    result: problems.length > before ? 'FAIL' : 'ok',
  });
}

/** A PAT session that works, and a way to revoke it through the first facade. */
async function revokedPatSession(services: Services, urls: Urls) {
  const [one] = services.of('rest-facade');
  const user = await createUser(urls, services.adminToken, 'revoke');
  const pat = await http('POST', `${urls.admin}/admin/pats`, {
    token: services.adminToken,
    body: {
      email: user.email,
      name: 'ha-proof',
      scope: 'READ_WRITE',
      expires: new Date(Date.now() + 86_400_000).toISOString().slice(0, 10),
    },
  });
  const session = (await http('POST', `${one!.publicUrl}/v1/pat/login`, { body: { token: pat.body.token } })).body.token as string;
  const result = { session, revokedStatus: 0, revoke: async () => undefined as void };
  result.revoke = async () => {
    const res = await http('POST', `${one!.publicUrl}/v1/pat/revoke`, {
      token: session,
      body: { tokenId: String(pat.body.token).split('.')[0] },
    });
    result.revokedStatus = res.status;
  };
  return result;
}

function printRows(): void {
  printTable(
    ['failover', 'served again after', 'acknowledged writes checked', 'lost', 'result'],
    rows.map((r) => [r.check, r.servedAgain, String(r.writes), String(r.lost), r.result]),
  );
}

async function all(): Promise<void> {
  try {
    await main();
    if (process.env['HA_PROOF_SKIP_CLUSTER'] !== '1') await redisCluster();
  } finally {
    printRows();
  }
}

report.finish('ha-proof', all());
