import type { DataSource } from 'typeorm';
import { openDatabase } from '@trading/db';
import { createLogger } from '@trading/logging';
import type { SubgraphContext } from '@trading/subgraph';
import { createTestDatabases, type TestDatabases } from '@trading/testing';
import { OPEN_ORDER_CAP_SETTING, omsMigrations } from '../migrations';
import { openSellsResolvers, type HoldingReference } from './open-sells';

const ALICE = '00000000-0000-4000-8000-00000000000a';
const BOB = '00000000-0000-4000-8000-00000000000b';

/**
 * What an account's working sells promise of each holding, as the accounts subgraph's
 * `quantityAvailable` takes it: counted as the sell checks count it, for the caller's own
 * accounts only.
 */
describe('open sell quantity of a holding', () => {
  let dbs: TestDatabases<'oms'>;
  let db: DataSource;

  const order = async (o: {
    account?: string;
    symbol?: string;
    side?: 'BUY' | 'SELL';
    quantity: string;
    filled?: string;
    status?: string;
    parent?: string;
    oco?: string;
  }): Promise<string> => {
    const [row]: Array<{ id: string }> = await db.query(
      `INSERT INTO orders (account_id, client_order_id, symbol, side, type, time_in_force, quantity, limit_price, status, user_id, currency,
                           hold_amount, submitted_at, filled_quantity, parent_order_id, oco_group_id, filled_at, cancelled_at)
       VALUES ($1, gen_random_uuid()::text, $2, $3, 'LIMIT', 'GTC', $4, 100, $5, 'u', 'USD', 1000, now(), $6, $7, $8,
               CASE WHEN $5 = 'FILLED' THEN now() END, CASE WHEN $5 = 'CANCELLED' THEN now() END) RETURNING id`,
      [
        o.account ?? ALICE,
        o.symbol ?? 'AAA',
        o.side ?? 'SELL',
        o.quantity,
        o.status ?? 'NEW',
        o.filled ?? '0',
        o.parent ?? null,
        o.oco ?? null,
      ],
    );
    return row!.id;
  };
  const ctx = (sub = 'alice'): SubgraphContext => ({
    claims: { sub, sid: 's', kind: 'pat', scope: ['read:accounts'] },
    requestId: 'r',
    logger: createLogger('t', 'silent'),
    memo: new Map(),
  });
  const owned = { ownedIds: async (claims: { sub: string }) => (claims.sub === 'alice' ? [ALICE] : [BOB]) };
  const openSells = (symbol: string, account = ALICE, context = ctx()) => {
    const resolve = openSellsResolvers(db, owned).Position!.openSellQuantity as unknown as (
      p: HoldingReference,
      a: unknown,
      c: SubgraphContext,
    ) => Promise<string>;
    return resolve({ accountId: account, symbol, lastPrice: '100', previousClose: '100' }, {}, context);
  };

  beforeAll(async () => {
    dbs = await createTestDatabases(['oms']);
    db = await openDatabase({ url: dbs.urls.oms, entities: [], migrations: omsMigrations, settings: { [OPEN_ORDER_CAP_SETTING]: '100' } });
    await db.query(
      `INSERT INTO instruments (symbol, name, currency, tick_size, lot_size, last_price, previous_close, tradable)
       VALUES ('AAA', 'A', 'USD', 0.01, 1, 100, 100, true), ('BBB', 'B', 'USD', 0.01, 1, 100, 100, true)`,
    );
    await order({ quantity: '10', filled: '3' }); // 7 still to sell
    await order({ quantity: '5', filled: '2', status: 'PARTIALLY_FILLED' }); // 3
    await order({ quantity: '2', status: 'ACCEPTED' }); // 2: being placed
    const oco = '00000000-0000-4000-8000-0000000000c0';
    await order({ quantity: '4', oco }); // an OCO pair sells 4 once, whichever leg fills
    await order({ quantity: '4', oco });
    const entry = await order({ side: 'BUY', quantity: '6', filled: '2', status: 'PARTIALLY_FILLED' });
    await order({ quantity: '6', status: 'PENDING', parent: entry }); // a bracket's exit: the 2 its entry bought so far
    const replaced = await order({ quantity: '50' });
    await db.query('UPDATE orders SET replaced_by_order_id = gen_random_uuid() WHERE id = $1', [replaced]); // replaced: its successor counts
    await order({ quantity: '9', status: 'CANCELLED' });
    await order({ quantity: '9', filled: '9', status: 'FILLED' });
    await order({ side: 'BUY', quantity: '9' });
    await order({ symbol: 'BBB', quantity: '1.5' });
    await order({ account: BOB, quantity: '8' });
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await dbs?.drop();
  });

  it('sums the working sells per symbol as the sell checks do, 0 where there are none', async () => {
    expect(await openSells('AAA')).toBe('18'); // 7 + 3 + 2 + 4 + 2
    expect(await openSells('BBB')).toBe('1.5');
    expect(await openSells('ZZZ')).toBe('0');
    expect(await openSells('AAA', BOB, ctx('bob'))).toBe('8');
  });

  it("reads an account's orders once per request, however many holdings it values", async () => {
    const context = ctx();
    const reads: string[] = [];
    const query = db.query.bind(db);
    db.query = ((sql: string, params?: unknown[]) => {
      reads.push(sql);
      return query(sql, params);
    }) as DataSource['query'];
    try {
      await Promise.all(['AAA', 'BBB', 'ZZZ'].map((symbol) => openSells(symbol, ALICE, context)));
    } finally {
      db.query = query;
    }
    expect(reads).toHaveLength(1);
  });

  it("answers nothing of another user's account, or of a malformed one", async () => {
    await expect(openSells('AAA', BOB)).rejects.toMatchObject({ code: 'NOT_FOUND', field: 'accountId' });
    await expect(openSells('AAA', 'not-a-uuid')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
