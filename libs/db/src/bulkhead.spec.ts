import { Bulkhead } from './bulkhead';

describe('a bulkhead', () => {
  it('runs at most its slots at once, the rest in the order they came, and hands each freed slot on', async () => {
    const bulkhead = new Bulkhead(2);
    const started: number[] = [];
    const release: Array<() => void> = [];
    const runs = [0, 1, 2, 3, 4].map((n) =>
      bulkhead.run(async () => {
        started.push(n);
        await new Promise<void>((resolve) => release.push(resolve));
        return n;
      }),
    );
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1]);
    expect(bulkhead.load).toEqual({ running: 2, waiting: 3 });
    release[1]!();
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]);
    expect(bulkhead.load).toEqual({ running: 2, waiting: 2 });
    for (let i = 0; i < 5; i++) {
      release[i]?.();
      await new Promise((r) => setImmediate(r));
    }
    release.forEach((r) => r());
    await expect(Promise.all(runs)).resolves.toEqual([0, 1, 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(bulkhead.load).toEqual({ running: 0, waiting: 0 });
  });

  it('frees the slot of a run that fails, and passes the failure to its caller only', async () => {
    const bulkhead = new Bulkhead(1);
    const failed = bulkhead.run(async () => {
      throw new Error('read failed');
    });
    const next = bulkhead.run(async () => 'next');
    await expect(failed).rejects.toThrow('read failed');
    await expect(next).resolves.toBe('next');
    expect(bulkhead.load).toEqual({ running: 0, waiting: 0 });
  });

  it('refuses a size that would run nothing', () => {
    expect(() => new Bulkhead(0)).toThrow('A bulkhead needs at least one slot, not 0');
  });
});
