/**
 * What a resting limit buy's writes cost PostgreSQL, two ways in one process on the same server:
 * with the OMS schema as it stood before migration 091 (two more indexes on orders, which nothing
 * read) and as it stands now. Each way has its own OMS and banking databases, opened as the
 * services open them (one pooled session each, the same session settings), and gets the same
 * orders: the ACCEPTED order's row (written here with the columns a plain limit buy sets: the
 * service builds its insert per request), banking's hold (`HoldsService.place`, the service's own
 * statement; the same schema both ways, so its column is the run's noise), and the OMS's start
 * (`startWorking`, its own), spread over 48 accounts. Prints each backend's CPU per
 * order (from /proc, so PostgreSQL must run on this machine), the WAL written per order (the
 * server's, so nothing else should write meanwhile), the wall time, and the ratios.
 *
 *   npx tsx tools/bench/order-writes.ts   (TEST_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/test)
 */
import { randomUUID } from 'node:crypto';
import { bankingMigrations, HoldsService } from '@trading/banking-service';
import type { DataSource } from '@trading/db';
import { OPEN_ORDER_CAP_SETTING, omsMigrations, startWorking, type OrderRow } from '@trading/oms-service';
import { createTestDatabases } from '@trading/testing';
import { openOneSession } from './one-session';
import { CLOCK_TICKS, readCpuTicks } from './proc';

const ORDERS = 2_000;
const ACCOUNTS = 48;
const ROUNDS = 8;

type Way = 'before' | 'now';
interface Side {
  oms: DataSource;
  banking: DataSource;
  holds: HoldsService;
  backends: { oms: number; banking: number };
}

const accountOf = (i: number) => `00000000-0000-4000-8000-${String(i % ACCOUNTS).padStart(12, '0')}`;

/** One resting limit buy, as the order path writes it: the order, its hold, its start. */
async function placeOne(side: Side, i: number): Promise<void> {
  const account = accountOf(i);
  const [order]: OrderRow[] = await side.oms.query(
    `INSERT INTO orders (account_id, user_id, client_order_id, symbol, currency, side, type, time_in_force, quantity, limit_price, hold_amount, status)
     VALUES ($1, $2, $3, 'AAA', 'USD', 'BUY', 'LIMIT', 'GTC', 1, 50, 50.05, 'ACCEPTED')
     ON CONFLICT (account_id, client_order_id) DO NOTHING RETURNING *`,
    [account, `u${i % ACCOUNTS}`, randomUUID()],
  );
  await side.holds.place(`u${i % ACCOUNTS}`, { orderId: order!.id, accountId: account, currency: 'USD', amount: '50.05' });
  await startWorking(side.oms, order!);
}

/** The server's WAL position, in bytes: what a round wrote to it is the difference (the server's, so nothing else may write meanwhile). */
async function walPosition(db: DataSource): Promise<number> {
  const [{ at }]: Array<{ at: string }> = await db.query("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::text AS at");
  return Number(at);
}

async function round(side: Side, from: number): Promise<{ omsMs: number; bankingMs: number; wallMs: number; walBytes: number }> {
  const wal = await walPosition(side.oms);
  const before = { oms: readCpuTicks(side.backends.oms), banking: readCpuTicks(side.backends.banking) };
  const started = process.hrtime.bigint();
  for (let i = from; i < from + ORDERS; i++) await placeOne(side, i);
  const per = (ticks: number) => ((ticks / CLOCK_TICKS) * 1000) / ORDERS;
  return {
    omsMs: per(readCpuTicks(side.backends.oms) - before.oms),
    bankingMs: per(readCpuTicks(side.backends.banking) - before.banking),
    wallMs: Number(process.hrtime.bigint() - started) / 1e6 / ORDERS,
    walBytes: ((await walPosition(side.oms)) - wal) / ORDERS,
  };
}

async function main(): Promise<void> {
  const dbs = await createTestDatabases(['writes_oms_before', 'writes_oms_now', 'writes_banking_before', 'writes_banking_now']);
  const sides: Partial<Record<Way, Side>> = {};
  try {
    for (const way of ['before', 'now'] as const) {
      const oms = await openOneSession(
        way === 'before' ? dbs.urls.writes_oms_before : dbs.urls.writes_oms_now,
        way === 'before' ? omsMigrations.filter((m) => m.name !== 'OrdersUnusedIndexes1732230000091') : omsMigrations,
        { [OPEN_ORDER_CAP_SETTING]: '1000000000' },
      );
      const banking = await openOneSession(
        way === 'before' ? dbs.urls.writes_banking_before : dbs.urls.writes_banking_now,
        bankingMigrations,
      );
      await oms.db.query(
        `INSERT INTO instruments (symbol, name, currency, tick_size, lot_size, last_price, previous_close) VALUES ('AAA', 'A', 'USD', 0.01, 1, 100, 100)`,
      );
      // Each account's opening deposit: one balanced entry, booked as the ledger books one.
      for (let a = 0; a < ACCOUNTS; a++)
        await banking.db.query(
          `WITH entry AS (INSERT INTO journal_entries (kind, description) VALUES ('DEPOSIT', 'opening') RETURNING id)
           INSERT INTO postings (entry_id, account_id, book, currency, amount)
           SELECT entry.id, $1, leg.book, 'USD', leg.amount FROM entry, (VALUES ('CUSTOMER_CASH', 1e9), ('BANK_CLEARING', -1e9)) AS leg (book, amount)`,
          [accountOf(a)],
        );
      sides[way] = {
        oms: oms.db,
        banking: banking.db,
        holds: new HoldsService(banking.db),
        backends: { oms: oms.backend, banking: banking.backend },
      };
    }
    console.log(
      `A resting limit buy's writes, ${ORDERS} orders over ${ACCOUNTS} accounts per round, ${ROUNDS} rounds each way, alternated.\n`,
    );
    console.log('| Way | PostgreSQL CPU per order: OMS | banking | both | WAL per order | wall per order |');
    console.log('|---|--:|--:|--:|--:|--:|');
    // Warm both (prepared statements' first plans, caches), then alternate, the order flipped each round.
    let next = 0;
    for (const way of ['before', 'now'] as const) await round(sides[way]!, next);
    next += ORDERS;
    const zero = () => ({ omsMs: 0, bankingMs: 0, wallMs: 0, walBytes: 0 });
    const sum = { before: zero(), now: zero() };
    for (let r = 0; r < ROUNDS; r++) {
      for (const way of r % 2 ? (['now', 'before'] as const) : (['before', 'now'] as const)) {
        const figures = await round(sides[way]!, next);
        for (const k of ['omsMs', 'bankingMs', 'wallMs', 'walBytes'] as const) sum[way][k] += figures[k] / ROUNDS;
      }
      next += ORDERS;
    }
    const ms = (n: number) => `${n.toFixed(3)} ms`;
    for (const way of ['before', 'now'] as const) {
      const s = sum[way];
      console.log(
        `| ${way} | ${ms(s.omsMs)} | ${ms(s.bankingMs)} | ${ms(s.omsMs + s.bankingMs)} | ${Math.round(s.walBytes).toLocaleString('en-US')} bytes | ${ms(s.wallMs)} |`,
      );
    }
    const ratio = (b: number, n: number) => `${(n / b).toFixed(2)}×`;
    console.log(
      `\nNow ÷ before: OMS ${ratio(sum.before.omsMs, sum.now.omsMs)}, banking ${ratio(sum.before.bankingMs, sum.now.bankingMs)}, ` +
        `both ${ratio(sum.before.omsMs + sum.before.bankingMs, sum.now.omsMs + sum.now.bankingMs)} of PostgreSQL's CPU per order; ` +
        `WAL ${ratio(sum.before.walBytes, sum.now.walBytes)}.`,
    );
  } finally {
    for (const s of Object.values(sides)) {
      await s?.oms.destroy();
      await s?.banking.destroy();
    }
    await dbs.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
