import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import {
  connectEventLog,
  deadLetterStream,
  eventSignatureProblem,
  settlementConsumer,
  settlementShapeProblem,
  type DeliveredEvent,
  type EventLog,
} from '@trading/events';
import { createLogger } from '@trading/logging';
import { TEST_REDIS_URL, testKeyPrefix } from '@trading/testing';
import { bookCompletedDeposit } from './funding.service';
import { CANCEL, DEPOSIT, ENTITY, eventually, startBankingHarness, WITHDRAW, type BankingHarness } from '../testing/banking-harness';

const VIEW_FIELDS = 'id accountId type state amount currency reference rejectReason createdAt updatedAt completedAt cancelledAt rejectedAt';

/**
 * Banking's funding events against real PostgreSQL and Redis: each end state of a deposit or
 * withdrawal writes a `funding.updated` row into banking's outbox in the transaction that makes
 * it, and banking's relay puts it on the event stream signed with banking's key, where the
 * settlement consumers read past it.
 */
describe('funding events', () => {
  let h: BankingHarness;
  let events: EventLog;
  let redis: ReturnType<typeof createClient>;
  const stream = `${testKeyPrefix()}oms:events`;
  const alice = randomUUID();

  beforeAll(async () => {
    h = await startBankingHarness({ EVENTS_STREAM: stream, BANKING_CLEARING_DELAY_MS: '300', BANKING_CLEARING_POLL_MS: '50' });
    events = await connectEventLog(TEST_REDIS_URL);
    redis = createClient({ url: TEST_REDIS_URL });
    await redis.connect();
  }, 30_000);
  afterAll(async () => {
    await h?.close();
    await redis?.del([stream, deadLetterStream(stream)]);
    redis?.destroy();
    await events?.close();
  });

  const as = { sub: alice };
  /** The transaction as the API shows it now. */
  const view = async (accountId: string, id: string) =>
    (
      await h.gql(ENTITY(`fundingTransactions { nodes { ${VIEW_FIELDS} } }`), { r: [{ __typename: 'Account', id: accountId }] }, as)
    ).body.data._entities[0].fundingTransactions.nodes.find((t: { id: string }) => t.id === id);
  const settled = (accountId: string, id: string) =>
    eventually(
      () => view(accountId, id),
      (t) => t?.state !== 'PENDING',
    );
  /** Banking's outbox rows about one transaction, with whether each was written by the transaction that ended it. */
  const outboxOf = (id: string): Promise<Array<{ type: string; payload: any; with_change: boolean; stream_entry_id: string | null }>> =>
    h.service.dataSource.query(
      `SELECT o.type, o.payload, o.stream_entry_id,
              -- now() is the transaction's start: equal stamps mean one transaction wrote both
              o.created_at = coalesce(f.completed_at, f.rejected_at, f.cancelled_at) AS with_change
         FROM outbox o JOIN funding_transactions f ON f.id = (o.payload->'transaction'->>'id')::uuid
        WHERE f.id = $1 ORDER BY o.seq`,
      [id],
    );
  const onStream = async (eventId: string): Promise<DeliveredEvent | undefined> =>
    (await events.range(stream, 1000)).find((e) => e.eventId === eventId);
  const published = (id: string) =>
    eventually(
      () => outboxOf(id),
      (rows) => rows.length === 1 && rows[0]!.stream_entry_id !== null,
    );

  /** The row and the stream entry of a transaction that ended: banking's key, the contract's shape, the API's view. */
  async function expectAnnounced(accountId: string, id: string, state: string): Promise<DeliveredEvent> {
    const shown = await settled(accountId, id);
    expect(shown.state).toBe(state);
    const rows = await published(id);
    expect(rows).toEqual([
      { type: 'funding.updated', payload: { transaction: shown, userId: alice }, with_change: true, stream_entry_id: expect.any(String) },
    ]);
    const [{ event_id: eventId }] = await h.service.dataSource.query(
      "SELECT event_id::text FROM outbox WHERE payload->'transaction'->>'id' = $1",
      [id],
    );
    const entry = (await onStream(eventId))!;
    expect(entry).toMatchObject({ entryId: rows[0]!.stream_entry_id, type: 'funding.updated' });
    expect(entry.payload).toEqual({ eventId, type: 'funding.updated', occurredAt: expect.any(String), transaction: shown, userId: alice });
    expect(eventSignatureProblem(entry, h.keys.trusted, 'banking')).toBeNull();
    expect(eventSignatureProblem(entry, h.keys.trusted, 'oms')).toBe('signed by banking, not oms');
    expect(settlementShapeProblem(entry)).toBeNull();
    return entry;
  }

  it('a settled deposit: written with the change, then on the stream signed by banking, as the API shows it', async () => {
    const account = h.openAccount(alice);
    const res = await h.gql(DEPOSIT, { input: { accountId: account, amount: '125.5', currency: 'USD', reference: 'salary' } }, as);
    const id = res.body.data.deposit.id;
    const entry = await expectAnnounced(account, id, 'COMPLETED');
    expect(entry.payload['transaction']).toMatchObject({ type: 'DEPOSIT', amount: '125.50', currency: 'USD', reference: 'salary' });
  });

  it('a rejected withdrawal: written with the change, then on the stream signed by banking, with its reason', async () => {
    const account = h.openAccount(alice);
    await bookCompletedDeposit(h.service.dataSource, account, 'USD', '100', 'opening');
    const res = await h.gql(WITHDRAW, { input: { accountId: account, amount: '40', currency: 'USD', sandboxOutcome: 'REJECTED' } }, as);
    const id = res.body.data.withdraw.id;
    const entry = await expectAnnounced(account, id, 'REJECTED');
    expect(entry.payload['transaction']).toMatchObject({ type: 'WITHDRAWAL', amount: '40.00', rejectReason: expect.any(String) });
  });

  it('a cancelled withdrawal is announced too; a pending one and the seeded opening cash are not', async () => {
    const account = h.openAccount(alice);
    const opening = await bookCompletedDeposit(h.service.dataSource, account, 'USD', '100', 'opening');
    const res = await h.gql(WITHDRAW, { input: { accountId: account, amount: '30', currency: 'USD' } }, as);
    const id = res.body.data.withdraw.id;
    expect(await outboxOf(id)).toEqual([]); // PENDING is no end state
    expect((await h.gql(CANCEL, { id }, as)).body.data.cancelFundingTransaction.state).toBe('CANCELLED');
    await expectAnnounced(account, id, 'CANCELLED');
    expect(await outboxOf(opening)).toEqual([]);
  });

  it('attack on atomicity: when the event cannot be written, the end state is not written either', async () => {
    const ds = h.service.dataSource;
    await ds.query("ALTER TABLE outbox ADD CONSTRAINT funding_events_refused CHECK (type <> 'funding.updated') NOT VALID");
    try {
      const account = h.openAccount(alice);
      await bookCompletedDeposit(ds, account, 'USD', '100', 'opening');
      const deposit = (await h.gql(DEPOSIT, { input: { accountId: account, amount: '5', currency: 'USD' } }, as)).body.data.deposit;
      const withdrawal = (await h.gql(WITHDRAW, { input: { accountId: account, amount: '30', currency: 'USD' } }, as)).body.data.withdraw;
      const cancel = await h.gql(CANCEL, { id: withdrawal.id }, as);
      expect(cancel.body.errors).toBeDefined();
      // Past the clearing delay: clearing tried and rolled back, so both are still PENDING, the hold still held.
      await new Promise((r) => setTimeout(r, 800));
      expect((await view(account, deposit.id)).state).toBe('PENDING');
      expect((await view(account, withdrawal.id)).state).toBe('PENDING');
      const released = await ds.query("SELECT 1 FROM journal_entries WHERE kind = 'WITHDRAWAL_RELEASE' AND funding_transaction_id = $1", [
        withdrawal.id,
      ]);
      expect(released).toEqual([]);
    } finally {
      await ds.query('ALTER TABLE outbox DROP CONSTRAINT funding_events_refused');
    }
  });

  it("the settlement consumers read past banking's funding events: nothing booked, nothing dead-lettered", async () => {
    const account = h.openAccount(alice);
    const id = (await h.gql(DEPOSIT, { input: { accountId: account, amount: '7', currency: 'USD' } }, as)).body.data.deposit.id;
    await expectAnnounced(account, id, 'COMPLETED');
    // Accounts' group, as accounts runs it (same consumer, same rules), beside banking's own.
    const applied: string[] = [];
    const accounts = settlementConsumer(
      'accounts',
      async (event) => void applied.push(event.type),
      { log: events, stream, logger: createLogger('accounts', 'silent'), signers: h.keys.trusted },
      { consumer: 'accounts-test' },
    );
    await accounts.start();
    try {
      for (const group of ['banking', 'accounts']) {
        const caughtUp = await eventually(
          async () => [await events.groupLag(stream, group), await events.pendingCount(stream, group)],
          ([lag, pending]) => lag === 0 && pending === 0,
        );
        expect({ group, caughtUp }).toEqual({ group, caughtUp: [0, 0] });
      }
    } finally {
      await accounts.stop();
    }
    expect(applied).toEqual([]);
    expect(await events.range(deadLetterStream(stream), 100)).toEqual([]);
  });
});
