import { Lifecycle } from './lifecycle';

describe('Lifecycle', () => {
  it('closes in reverse order, once, past a failing step', async () => {
    const closed: string[] = [];
    const life = new Lifecycle();
    life.own('pool', 'p', (v) => closed.push(v));
    life.defer('worker', () => {
      closed.push('worker');
      throw new Error('stuck');
    });
    life.own('server', 's', async (v) => {
      closed.push(v);
    });
    await expect(life.close()).rejects.toThrow('closing worker failed: stuck');
    await expect(life.close()).rejects.toThrow(AggregateError); // the same outcome, nothing closed twice
    expect(closed).toEqual(['s', 'worker', 'p']);
  });

  it('closes what was opened when a later opening step fails, and passes that error on', async () => {
    const closed: string[] = [];
    const life = new Lifecycle();
    await expect(
      life.build(async (l) => {
        l.own('database', 'db', (v) => closed.push(v));
        l.own('redis', 'redis', (v) => closed.push(v));
        throw new Error('the signing keys could not be loaded');
      }),
    ).rejects.toThrow('the signing keys could not be loaded');
    expect(closed).toEqual(['redis', 'db']);
  });

  it('names a step that is slow to close, and only that one', async () => {
    const slow: string[] = [];
    const life = new Lifecycle({ slowStepMs: 50, onSlowStep: (name, ms) => slow.push(`${name} after ${ms} ms`) });
    life.defer('quick pool', () => undefined);
    life.defer('stuck consumer', () => new Promise((r) => setTimeout(r, 150)));
    await life.close();
    expect(slow).toEqual(['stuck consumer after 50 ms']);
  });

  it("an app's lifecycle logs the slow step by name, as every composition root's does", async () => {
    const warnings: unknown[][] = [];
    const life = Lifecycle.of('gateway', { warn: (...args: unknown[]) => void warnings.push(args) } as never, 50);
    life.defer('subgraph connections', () => new Promise((r) => setTimeout(r, 150)));
    await life.close();
    expect(warnings).toEqual([[{ step: 'subgraph connections', ms: 50 }, 'gateway: a shutdown step is slow']]);
  });
});
