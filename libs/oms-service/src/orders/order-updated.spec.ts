import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { openDatabase } from '@trading/db';
import { settlementShapeProblem, type DeliveredEvent } from '@trading/events';
import { createTestDatabases, type TestDatabases } from '@trading/testing';
import { omsMigrations } from '../migrations';
import { announceOrder, orderById, startWorking } from './order-store';

/**
 * `order.updated` names who placed the order beside the order (for routing it to that user's
 * webhooks), never inside it: the order is what clients are shown. Against real PostgreSQL.
 */
describe('order.updated', () => {
  let dbs: TestDatabases<'oms'>;
  let db: DataSource;

  beforeAll(async () => {
    dbs = await createTestDatabases(['oms']);
    db = await openDatabase({ url: dbs.urls.oms, entities: [], migrations: omsMigrations });
    await db.query(
      `INSERT INTO instruments (symbol, name, currency, tick_size, lot_size, last_price, previous_close, tradable)
       VALUES ('AAA', 'A', 'USD', 0.01, 1, 100, 100, true)`,
    );
  }, 30_000);
  afterAll(async () => {
    await db?.destroy();
    await dbs?.drop();
  });

  /** An order whose hold is made: not yet working (ACCEPTED), or working (NEW). */
  const placed = async (userId: string | null, status: 'ACCEPTED' | 'NEW' = 'ACCEPTED') => {
    const [{ id }] = await db.query(
      `INSERT INTO orders (account_id, client_order_id, symbol, side, type, time_in_force, quantity, limit_price, status, user_id, currency,
                           hold_amount, submitted_at)
       VALUES ($1, $2, 'AAA', 'BUY', 'LIMIT', 'GTC', 10, 95, $3, $4, 'USD', 951, CASE WHEN $3 = 'NEW' THEN now() END) RETURNING id`,
      [randomUUID(), randomUUID(), status, userId],
    );
    return (await orderById(db, id))!;
  };
  /** The order's events as the relay puts them on the stream (the envelope added to the stored payload). */
  const eventsOf = async (orderId: string): Promise<DeliveredEvent[]> =>
    (
      await db.query(
        `SELECT event_id::text, type, payload, created_at FROM outbox WHERE type = 'order.updated' AND payload->'order'->>'id' = $1 ORDER BY seq`,
        [orderId],
      )
    ).map((r: { event_id: string; type: string; payload: Record<string, unknown>; created_at: Date }) => ({
      eventId: r.event_id,
      type: r.type,
      entryId: '1-0',
      payload: { ...r.payload, eventId: r.event_id, type: r.type, occurredAt: new Date(r.created_at).toISOString() },
    }));

  it('an order starting to work: its placer beside the order, not in it, and the contract accepts it', async () => {
    const userId = randomUUID();
    const order = await placed(userId);
    expect(await startWorking(db, order)).toMatchObject({ status: 'NEW' });
    const [event] = await eventsOf(order.id);
    expect(event!.payload).toMatchObject({ userId, order: { id: order.id, status: 'NEW' } });
    expect(event!.payload['order']).not.toHaveProperty('userId');
    expect(JSON.stringify(event!.payload['order'])).not.toContain(userId);
    expect(settlementShapeProblem(event!)).toBeNull();
  });

  it('every later change names its placer the same way; an order no user placed says null', async () => {
    const userId = randomUUID();
    const order = await placed(userId, 'NEW');
    await db.transaction((tx) => announceOrder(tx, order));
    const unowned = await placed(null, 'NEW');
    await db.transaction((tx) => announceOrder(tx, unowned));
    const [mine] = await eventsOf(order.id);
    const [nobody] = await eventsOf(unowned.id);
    expect(mine!.payload['userId']).toBe(userId);
    expect(nobody!.payload['userId']).toBeNull();
    expect([settlementShapeProblem(mine!), settlementShapeProblem(nobody!)]).toEqual([null, null]);
  });

  it('the contract refuses a placer that is not a user id', () => {
    const eventId = randomUUID();
    const order = { id: randomUUID(), accountId: randomUUID(), status: 'NEW', updatedAt: new Date().toISOString() };
    const payload = { eventId, type: 'order.updated', occurredAt: new Date().toISOString(), order, userId: 'someone' };
    expect(settlementShapeProblem({ eventId, type: 'order.updated', entryId: '1-0', payload })).toBe('userId must be a UUID');
  });
});
