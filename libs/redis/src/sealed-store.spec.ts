import { randomUUID } from 'node:crypto';
import { connectStore, SealedStore, swapResult, type KeyValueStore } from './index';

const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

describe('SealedStore on real Redis', () => {
  let raw: KeyValueStore;
  let sealed: SealedStore;
  const forgeries: string[] = [];

  beforeAll(async () => {
    raw = await connectStore(REDIS_URL, { keyPrefix: `test:${randomUUID()}:` });
    sealed = new SealedStore(raw, 'a-secret-redis-never-sees-0123456789', (key) => forgeries.push(key));
  });
  afterAll(() => raw.close());

  it('reads back what it wrote, through swaps and their spent marks', async () => {
    await sealed.set('code:1', '{"user":"alice"}', 60);
    expect(await sealed.get('code:1')).toBe('{"user":"alice"}');
    const swapped = await sealed.swap('code:1', 'refresh:1', '{"user":"alice","n":1}', 60);
    expect(swapped).toEqual({ value: '{"user":"alice"}', spent: false });
    expect(swapResult(await sealed.get('code:1'))).toMatchObject({ value: '{"user":"alice"}', spent: true });
    expect(await sealed.get('refresh:1')).toBe('{"user":"alice","n":1}');
  });

  it('seals the writes a swap carries that ask for it, and passes the others as they are', async () => {
    await sealed.set('refresh:a', 'old', 60);
    await sealed.swap('refresh:a', 'refresh:b', 'new', 60, {
      values: [
        { key: 'answer:a', value: 'retry-answer', ttlSeconds: 30, sealed: true },
        { key: 'session:a', value: '{"sid":"a"}', ttlSeconds: 30 },
      ],
    });
    expect(await sealed.get('answer:a')).toBe('retry-answer');
    expect(await raw.get('answer:a')).not.toBe('retry-answer');
    // The session record is read through a plain store by the edges.
    expect(await raw.get('session:a')).toBe('{"sid":"a"}');
  });

  it('attack: a value written straight into Redis, changed there, or copied to another key reads as missing', async () => {
    await raw.set('forged', '{"user":"bob"}', 60);
    expect(await sealed.get('forged')).toBeNull();
    await sealed.set('session:alice', '{"user":"alice"}', 60);
    const genuine = (await raw.get('session:alice'))!;
    await raw.set('session:alice', genuine.replace('alice', 'bob__'), 60);
    expect(await sealed.get('session:alice')).toBeNull();
    await raw.set('session:mine', genuine, 60); // a key whose cookie the attacker knows
    expect(await sealed.get('session:mine')).toBeNull();
    expect(await sealed.swap('forged', 'refresh:2', 'x', 60)).toBeNull();
    expect(forgeries).toEqual(expect.arrayContaining(['forged', 'session:alice', 'session:mine']));
    // Another secret (another deployment) cannot read it either.
    await sealed.set('k', 'v', 60);
    expect(await new SealedStore(raw, 'another-secret-0123456789-abcdef').get('k')).toBeNull();
  });
});
