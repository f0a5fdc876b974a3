import { randomUUID } from 'node:crypto';
import { connectStore, MemoryStore, type KeyValueStore } from './index';

const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

describe.each([
  ['redis', () => connectStore(REDIS_URL, { keyPrefix: `test:${randomUUID()}:` })],
  ['memory', async () => new MemoryStore()],
])('%s store', (_kind, open) => {
  let store: KeyValueStore;
  beforeAll(async () => {
    store = await open();
  });
  afterAll(() => store.close());

  it('sets, reads and deletes values', async () => {
    await store.set('a', '1');
    expect(await store.get('a')).toBe('1');
    expect(await store.del('a', 'missing')).toBe(1);
    expect(await store.get('a')).toBeNull();
  });

  it('expires values after their time to live', async () => {
    await store.set('short', 'x', 1);
    expect(await store.get('short')).toBe('x');
    await new Promise((r) => setTimeout(r, 1100));
    expect(await store.get('short')).toBeNull();
  });

  it('keeps set members', async () => {
    await store.addToSet('s', 'one', 60);
    await store.addToSet('s', 'two', 60);
    expect((await store.members('s')).sort()).toEqual(['one', 'two']);
  });

  it('counts hits within a window', async () => {
    const first = await store.hit('h', 60);
    const second = await store.hit('h', 60);
    expect([first.count, second.count]).toEqual([1, 2]);
    expect(second.resetSeconds).toBeGreaterThan(0);
    expect(second.resetSeconds).toBeLessThanOrEqual(60);
  });
});

describe('connectStore', () => {
  it('falls back to memory only when asked, and says why', async () => {
    await expect(connectStore('redis://127.0.0.1:1')).rejects.toThrow(/cannot reach Redis/);
    let reason = '';
    const store = await connectStore('redis://127.0.0.1:1', { fallbackToMemory: true, onFallback: (r) => (reason = r) });
    expect(store.kind).toBe('memory');
    expect(reason).toContain('127.0.0.1:1');
  });
});
