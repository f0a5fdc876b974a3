import { connectStore, MemoryStore, type KeyValueStore } from '@trading/redis';
import { TEST_REDIS_URL, testKeyPrefix, uniqueId } from '@trading/testing';
import { resetMailFloorKey, ResetMailBudget } from './reset-mail-budget';

describe.each([
  ['redis', () => connectStore(TEST_REDIS_URL, { keyPrefix: testKeyPrefix() })],
  ['memory', async () => new MemoryStore()],
])('reset mail budgets on the %s store', (_kind, open) => {
  let store: KeyValueStore;
  beforeAll(async () => {
    store = await open();
  });
  afterAll(() => store.close());

  it('count per (account, address) and per account, charge only mails sent, and always let one per floor through', async () => {
    const namespace = uniqueId();
    const budget = new ResetMailBudget(store, namespace, {
      perAccountAndAddress: 2,
      perAccount: 3,
      windowSeconds: 3600,
      floorSeconds: 900,
    });
    const account = `${uniqueId()}@example.com`;
    expect([await budget.allows(account, 'a'), await budget.allows(account, 'a'), await budget.allows(account, 'a')]).toEqual([
      true,
      true,
      false,
    ]);
    // Another address has its own budget for the account, until the account's own is spent.
    expect([await budget.allows(account, 'b'), await budget.allows(account, 'c')]).toEqual([true, false]);
    // Another account is untouched by all of it.
    expect(await budget.allows(`${uniqueId()}@example.com`, 'a')).toBe(true);
    // The floor's time passes: one more mail, then none until it passes again.
    await store.del(resetMailFloorKey(namespace, account));
    expect([await budget.allows(account, 'a'), await budget.allows(account, 'b')]).toEqual([true, false]);
  });
});
