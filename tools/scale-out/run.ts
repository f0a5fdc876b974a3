/**
 * Several instances of every service behave as one, shown on this machine: two
 * processes of each app behind HAProxy, against one private PostgreSQL and one private Redis
 * (this run crashes both; nobody else uses them). Checks, in order:
 *   1. all twelve processes started at the same moment on empty databases migrate once;
 *   2. a PAT session revoked through one facade instance is refused at once by the other; a
 *      refresh token rotated through one auth instance cannot be reused through the other;
 *      `{base_url}/oauth/*` at HAProxy is answered by auth itself, never through the facade;
 *   3. two banking and two accounts consumers share the settlement stream: a burst of fills is
 *      applied exactly once (the money and position invariants);
 *   4. a rolling restart of every instance under steady load (reads, and market orders that fill
 *      and settle while instances come and go) loses no request (0 failures, 0 5xx) and breaks no
 *      money invariant;
 *   5. after Redis is killed and restarted (empty) and PostgreSQL crashed and restarted under load,
 *      every refusal meanwhile was a 503, every process is ready again, the OMS published the
 *      lost settlement stream again and no money invariant broke; then every process exits
 *      within its grace period on SIGTERM;
 *   6. the same outage under the all-in-one (`npm start`'s primary and two workers): ready again,
 *      a new session served, then exit 0 on SIGTERM within the grace period, no worker left.
 * Prints a table and `scale-out: ok`, or the failures (exit status 1).
 *
 * Settings: SCALE_OUT_PORT_BASE (21000: below the ephemeral range), SCALE_OUT_KEEP_LOGS=1.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  createUser,
  fund,
  grantTokens,
  http,
  listInstrument,
  provisionApp,
  sampleValue,
  scrapeMetrics,
  type Urls,
  type WorldUser,
} from '@trading/testing';
import { Databases, invariantProblems, migratedOnce, progress, settledNow } from './checks';
import { ALL_IN_ONE_WORKERS, AllInOne } from './all-in-one';
import { backendName, HaProxy } from './haproxy';
import { orderFlow, steadyLoad, type LoadResult } from './load';
import { PrivatePostgres } from './postgres';
import { printTable, Report } from './report';
import { portFree, sleep, waitFor } from './processes';
import { PrivateRedis } from './redis';
import { APPS, buildBundles, DATABASES, dbName, INSTANCES, Ports, Services, type Instance } from './services';

const ROOT = resolve(__dirname, '../..');
/** What the apps drain within on SIGTERM (libs/service: listeners close, then 2 s for open connections), with room to spare. */
const GRACE_MS = 20_000;

interface Row {
  phase: string;
  instances: number;
  sent: number | string;
  failures: number | string;
  fiveXx: number | string;
  p99: string;
}

const rows: Row[] = [];
const report = new Report();
const { problems, check, step } = report;

async function main(): Promise<void> {
  const ports = new Ports(Number(process.env['SCALE_OUT_PORT_BASE'] ?? 21000));
  const busy = [];
  for (const port of ports.all()) if (!(await portFree(port))) busy.push(port);
  if (busy.length) throw new Error(`ports in use: ${busy.join(', ')} (set SCALE_OUT_PORT_BASE)`);

  step('build the bundles');
  buildBundles(ROOT);

  const dir = mkdtempSync(join(tmpdir(), 'scale-out-'));
  chmodSync(dir, 0o711); // as root, PostgreSQL runs as the postgres user and must reach its own directory (not list the logs)
  const pg = new PrivatePostgres(dir, ports.postgres());
  const redis = new PrivateRedis(ROOT, dir, ports.redis(), 'scale:oms:events');
  const services = new Services(ROOT, dir, ports, pg, redis);
  const haproxy = HaProxy.forServices(dir, services);
  const allInOne = new AllInOne(ROOT, dir, ports, pg, new PrivateRedis(ROOT, dir, ports.allInOneRedis(), 'oms:events', false));
  let db: Databases | undefined;
  try {
    step('a private PostgreSQL and Redis (ACL users)');
    pg.init();
    pg.start();
    for (const name of DATABASES) pg.createDatabase(dbName(name));
    await redis.start();
    db = new Databases(pg);

    await startAllAtOnce(services, db);

    step('HAProxy in front of each pair (round robin, health-checked on /readyz)');
    await haproxy.start();
    for (const x of services.instances) await haproxy.waitUp(x);
    check(true, 'every instance UP in every backend');

    const urls: Urls = { api: `${services.lb('rest-facade')}/v1`, login: services.lb('auth'), admin: `http://127.0.0.1:${ports.admin(0)}` };
    const user = await createUser(urls, services.adminToken, 'scale');
    const symbol = await listInstrument(urls, services.adminToken, '100.00');
    await fund(urls, user, '1000000');

    step('revocation and rotation reach every instance');
    await revocationAcrossFacades(services, urls);
    await rotationAcrossAuth(services, urls);
    await tokenPathSkipsFacade(haproxy, services, urls);

    step('two banking and two accounts consumers share the settlement stream');
    await fillsAppliedOnce(db, urls, user.session, user.accounts, symbol);

    await rollingRestart(services, haproxy, db, urls, user, symbol);

    await dependencyOutage(services, redis, pg, db, user.session);

    await terminateAll(services);

    step(`the all-in-one (npm start, ${ALL_IN_ONE_WORKERS} workers): Redis killed and PostgreSQL crashed under load, then SIGTERM`);
    await allInOneOutage(allInOne, pg);
  } finally {
    await allInOne.kill();
    await allInOne.redis.stop();
    await db?.end().catch(() => undefined);
    await haproxy.stop();
    await services.killAll();
    await redis.stop();
    pg.stop();
    printRows();
    if (problems.length || process.env['SCALE_OUT_KEEP_LOGS'] === '1') console.log(`\nlogs: ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

/** Every instance started at the same moment on empty databases: each migration must be applied once. */
async function startAllAtOnce(services: Services, db: Databases): Promise<void> {
  step(`${APPS.length} apps × ${INSTANCES} instances, all started at once on empty databases`);
  const startedAt = Date.now();
  for (const x of services.instances) services.start(x);
  await Promise.all(services.instances.map((x) => services.waitReady(x, 120_000)));
  console.log(`  all ${services.instances.length} ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  const migrations = await migratedOnce(db);
  check(
    !migrations.problems.length,
    `each migration applied once (${JSON.stringify(migrations.counts)}) ${migrations.problems.join('; ')}`,
  );
}

/** Every instance restarted in turn under steady load: no request lost, every drain within the grace period, the money intact. */
async function rollingRestart(services: Services, haproxy: HaProxy, db: Databases, urls: Urls, user: WorldUser, symbol: string) {
  step('rolling restart of every instance under steady load: reads, and market orders that fill and settle');
  const load = steadyLoad(services.lb('rest-facade'), user.session, ['/v1/accounts', `/v1/banking/${user.accounts[0]}/balance/USD`], 30);
  const orders = orderFlow(urls.api, user.session, user.accounts, symbol, 4);
  await sleep(2000);
  const exits: number[] = [];
  for (const app of APPS)
    for (const x of services.of(app)) {
      exits.push(await restartOne(services, haproxy, x));
      await sleep(500);
    }
  await sleep(2000);
  const during = await load.stop();
  const ordered = await orders.stop();
  rows.push(row('rolling restart: reads', services.instances.length, during));
  rows.push(row('rolling restart: market orders', services.instances.length, ordered));
  check(
    during.failures === 0 && during.fiveXx === 0,
    `no read lost: ${during.sent} sent, ${during.failures} failed (codes ${JSON.stringify(during.codes)})`,
  );
  check(
    ordered.failures === 0 && ordered.accepted > 0,
    `no order lost: ${ordered.sent} placed, ${ordered.accepted} accepted, ${ordered.failures} failed (codes ${JSON.stringify(ordered.codes)})`,
  );
  check(
    exits.every((ms) => ms < GRACE_MS),
    `each instance drained and exited in ${Math.max(...exits)} ms at most`,
  );
  await waitFor('settlement to catch up', 60_000, async () => settledNow(await progress(db)));
  const afterRestart = await invariantProblems(db);
  check(!afterRestart.length, `money invariants after the restart ${afterRestart.join('; ')}`);
}

/**
 * Redis killed and restarted empty, then PostgreSQL crashed and restarted, under a load of `session`'s
 * reads: every instance recovers, the OMS republishes the lost stream, the money stays intact.
 */
async function dependencyOutage(services: Services, redis: PrivateRedis, pg: PrivatePostgres, db: Databases, session: string) {
  step('Redis killed and restarted, PostgreSQL crashed and restarted, under load');
  const stormy = steadyLoad(services.lb('rest-facade'), session, ['/v1/accounts'], 20);
  await sleep(2000);
  await redis.kill();
  await sleep(2000);
  await redis.start();
  await sleep(2000);
  pg.crash();
  await sleep(2000);
  pg.start();
  await Promise.all(services.instances.map((x) => services.waitReady(x, 90_000)));
  const storm = await stormy.stop();
  rows.push(row('dependencies failing', services.instances.length, storm));
  checkRefusalsSayRetry(storm);
  check(
    services.instances.every((x) => services.running(x) && x.crashes === 0),
    'every instance survived and is ready again',
  );
  // Redis came back empty, the settlement stream with it: the OMS puts what it had published back
  // on the stream, and banking and accounts skip every event they had already applied.
  await waitFor('settlement to catch up after the outage', 60_000, async () => settledNow(await progress(db)));
  const republished = await republishedByOms(services);
  check(republished > 0, `the OMS published again the ${republished} settlement events the restarted Redis had lost`);
  const afterOutage = await invariantProblems(db);
  check(!afterOutage.length, `money invariants after Redis lost the stream and PostgreSQL crashed ${afterOutage.join('; ')}`);
}

/** SIGTERM to every process at once: each exits 0 within the grace period. */
async function terminateAll(services: Services) {
  step('SIGTERM to every process at once');
  const stopped = await Promise.all(services.instances.map(async (x) => ({ x, ...(await services.terminate(x, GRACE_MS)) })));
  for (const { x, code, ms } of stopped) check(code === 0, `${x.name} exited ${code ?? 'NOT within the grace period'} in ${ms} ms`);
  rows.push({
    phase: 'SIGTERM after the failures',
    instances: stopped.length,
    sent: '-',
    failures: stopped.filter((s) => s.code !== 0).length,
    fiveXx: '-',
    p99: `${Math.max(...stopped.map((s) => s.ms))} ms to exit`,
  });
}

/** oms_outbox_republished_total over the OMS instances. */
async function republishedByOms(services: Services): Promise<number> {
  let total = 0;
  for (const x of services.of('oms'))
    total += sampleValue(await scrapeMetrics(`${x.internalUrl}/metrics`), 'oms_outbox_republished_total') ?? NaN;
  return total;
}

/** While Redis or PostgreSQL is away, a refused request is told to try again (503), never that something broke (500). */
function checkRefusalsSayRetry(storm: LoadResult): void {
  check(!storm.codes['500'], `refusals while they were down said "try again" (503), never 500: ${JSON.stringify(storm.codes)}`);
}

const row = (phase: string, instances: number, r: LoadResult): Row => ({
  phase,
  instances,
  sent: r.sent,
  failures: r.failures,
  fiveXx: r.fiveXx,
  p99: `${r.p99} ms`,
});

/** A PAT session made through facade 1 and revoked through facade 1 is refused by facade 2 on the very next request. */
async function revocationAcrossFacades(services: Services, urls: Urls): Promise<void> {
  const [one, two] = services.of('rest-facade') as [Instance, Instance];
  const user = await createUser(urls, services.adminToken, 'revoke');
  const pat = await http('POST', `${urls.admin}/admin/pats`, {
    token: services.adminToken,
    body: {
      email: user.email,
      name: 'scale-out',
      scope: 'READ_WRITE',
      expires: new Date(Date.now() + 86_400_000).toISOString().slice(0, 10),
    },
  });
  const login = await http('POST', `${one.publicUrl}/v1/pat/login`, { body: { token: pat.body.token } });
  const session = login.body.token as string;
  const before = await http('GET', `${two.publicUrl}/v1/accounts`, { token: session });
  const revoked = await http('POST', `${one.publicUrl}/v1/pat/revoke`, {
    token: session,
    body: { tokenId: String(pat.body.token).split('.')[0] },
  });
  const after = await http('GET', `${two.publicUrl}/v1/accounts`, { token: session });
  check(
    before.status === 200 && revoked.status === 200 && after.status === 401,
    `PAT revoked through ${one.name} (${revoked.status}) is refused at once by ${two.name} (${before.status} before, ${after.status} after)`,
  );
}

/** A refresh token rotated at auth 1, whose successor was used, is refused at auth 2, and that reuse ends the grant everywhere. */
async function rotationAcrossAuth(services: Services, urls: Urls): Promise<void> {
  const [one, two] = services.of('auth') as [Instance, Instance];
  const app = await provisionApp(urls, services.adminToken);
  const user = await createUser(urls, services.adminToken, 'rotate');
  const first = await grantTokens(urls, app, user);
  const refresh = (at: Instance, token: string) =>
    http('POST', `${at.publicUrl}/oauth/token`, {
      body: { grant_type: 'refresh_token', refresh_token: token, client_id: app.clientId, client_secret: app.clientSecret },
    });
  const rotated = await refresh(one, first.refresh_token);
  // The client moved on (its new refresh token used at auth 1): the old one again, at auth 2, is a thief's.
  const successor = await refresh(one, rotated.body.refresh_token);
  const reused = await refresh(two, first.refresh_token);
  const after = await refresh(one, successor.body.refresh_token);
  check(
    rotated.status === 200 &&
      successor.status === 200 &&
      reused.status === 400 &&
      reused.body.error === 'invalid_grant' &&
      after.status === 400,
    `refresh token rotated at ${one.name} (${rotated.status}), its successor used (${successor.status}), is refused at ${two.name} (${reused.status} ${reused.body.error}), and the grant is over (${after.status})`,
  );
}

/**
 * {base_url}/oauth/token at the load balancer, as vendors call it, is answered by auth itself: the
 * facade's backend passes on none of those answers, auth's every one.
 */
async function tokenPathSkipsFacade(haproxy: HaProxy, services: Services, urls: Urls): Promise<void> {
  const app = await provisionApp(urls, services.adminToken);
  let tokens = await grantTokens(urls, app, await createUser(urls, services.adminToken, 'ingress'));
  const before = { facade: await haproxy.answered2xx('rest-facade'), auth: await haproxy.answered2xx('auth') };
  const rotations = 10;
  let ok = 0;
  for (let i = 0; i < rotations; i++) {
    const res = await http('POST', `${urls.api}/oauth/token`, {
      body: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: app.clientId, client_secret: app.clientSecret },
    });
    if (res.status === 200) [ok, tokens] = [ok + 1, res.body];
  }
  const facade = (await haproxy.answered2xx('rest-facade')) - before.facade;
  const auth = (await haproxy.answered2xx('auth')) - before.auth;
  check(
    ok === rotations && facade === 0 && auth >= rotations,
    `${ok}/${rotations} rotations at {base_url}/oauth/token through HAProxy: ${auth} answered by auth's backend, ${facade} by the facade's`,
  );
}

/** A burst of market orders from two accounts: every fill applied once by banking and once by accounts. */
async function fillsAppliedOnce(db: Databases, urls: Urls, session: string, accounts: string[], symbol: string): Promise<void> {
  const orders = 40;
  const placed = await Promise.all(
    Array.from({ length: orders }, (_, i) =>
      http('POST', `${urls.api}/oms/order`, {
        token: session,
        headers: { 'idempotency-key': `scale-out-${i}` },
        body: {
          accountId: accounts[i % accounts.length],
          symbol,
          side: 'BUY',
          type: 'MARKET',
          timeInForce: 'DAY',
          quantity: '1',
          clientOrderId: `scale-out-${i}`,
        },
      }),
    ),
  );
  const accepted = placed.filter((r) => r.status === 201).length;
  check(accepted === orders, `${accepted} of ${orders} market orders accepted (${[...new Set(placed.map((r) => r.status))].join(', ')})`);
  await waitFor('every fill applied by banking and accounts', 60_000, async () => settledNow(await progress(db)));
  const p = await progress(db);
  const found = await invariantProblems(db);
  check(
    !found.length && p.trades >= accepted,
    `${p.trades} fills, ${p.events} events: each applied exactly once, ledger and positions hold ${found.join('; ')}`,
  );
}

/**
 * The all-in-one on the run's PostgreSQL: started, loaded, its Redis killed and restarted and
 * PostgreSQL crashed and restarted; then it must be ready again, serve a new session, and on
 * SIGTERM exit 0 (every worker drained in time) within the grace period, leaving no worker behind.
 */
async function allInOneOutage(aio: AllInOne, pg: PrivatePostgres): Promise<void> {
  await aio.redis.start();
  aio.start();
  const pat = await aio.waitStarted(120_000);
  const login = async () => (await http('POST', `${aio.apiUrl}/pat/login`, { body: { token: pat } })).body.token as string;
  const load = steadyLoad(aio.apiUrl.replace(/\/v1$/, ''), await login(), ['/v1/accounts'], 20);
  await sleep(2000);
  await aio.redis.kill();
  await sleep(2000);
  await aio.redis.start();
  await sleep(2000);
  pg.crash();
  await sleep(2000);
  pg.start();
  await aio.waitReady(90_000);
  const storm = await load.stop();
  rows.push(row('all-in-one: Redis killed + PostgreSQL crashed, both restarted', ALL_IN_ONE_WORKERS + 1, storm));
  checkRefusalsSayRetry(storm);
  // Redis kept nothing, so the session from before is gone: a new login through the same PAT must work.
  const session = await login().catch(() => '');
  const accounts = session ? await http('GET', `${aio.apiUrl}/accounts`, { token: session }) : undefined;
  check(
    aio.running() && accounts?.status === 200,
    `the all-in-one is ready again and serves a new session (${accounts?.status ?? 'no login'})`,
  );

  const { code, ms, workersLeft } = await aio.terminate(GRACE_MS);
  check(
    code === 0,
    `the all-in-one exited ${code ?? 'NOT within the grace period'} in ${ms} ms on SIGTERM (0: every worker drained in time)`,
  );
  check(!workersLeft.length, `no worker left behind (${workersLeft.join(', ') || 'none'})`);
  rows.push({
    phase: 'all-in-one: SIGTERM after the failures',
    instances: ALL_IN_ONE_WORKERS + 1,
    sent: '-',
    failures: code === 0 && !workersLeft.length ? 0 : 1,
    fiveXx: '-',
    p99: `${ms} ms to exit`,
  });
}

/** One instance out of rotation, SIGTERM, drained, started again, back in rotation; the ms it took to exit. */
async function restartOne(services: Services, haproxy: HaProxy, x: Instance): Promise<number> {
  const servers = (['public', 'internal'] as const).map((l) => `${backendName(x.app, l)}/${x.name}`);
  // What an orchestrator does first: no new requests to it (in-flight ones finish).
  for (const s of servers) await haproxy.command(`set server ${s} state drain`);
  await sleep(300);
  const { code, ms } = await services.terminate(x, GRACE_MS);
  if (code !== 0) problems.push(`${x.name} exited ${code ?? 'not at all'} on SIGTERM`);
  services.start(x);
  await services.waitReady(x, 60_000);
  for (const s of servers) await haproxy.command(`set server ${s} state ready`);
  await haproxy.waitUp(x);
  console.log(`  ${x.name}: exited in ${ms} ms, back in rotation`);
  return ms;
}

function printRows(): void {
  printTable(
    ['phase', 'instances', 'requests sent', 'failures', '5xx', 'p99'],
    rows.map((r) => [r.phase, String(r.instances), String(r.sent), String(r.failures), String(r.fiveXx), r.p99]),
  );
}

report.finish('scale-out', main());
