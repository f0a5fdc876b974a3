import { http } from '@trading/testing';
import { DEMO_ACCOUNTS } from '@trading/platform';
import { childrenOf, startNpmStart, type NpmStart } from '../support/npm-start-process';

/**
 * Ctrl-C after use stops a newcomer's `npm start` (embedded PostgreSQL, a worker per
 * core) cleanly: every process gone, exit 0, and not one error-level line or stack trace.
 */
describe('npm start with its embedded PostgreSQL: Ctrl-C after load is a clean stop', () => {
  let platform: NpmStart;

  beforeAll(async () => {
    platform = await startNpmStart({}, { embedded: true });
  }, 180_000);
  afterAll(() => platform?.cleanUp());

  it('SIGINT to the process group (what Ctrl-C sends) exits 0 with no error line, the database stopped last', async () => {
    const { child } = platform;
    const { api } = platform;
    const session = await platform.session('READ_WRITE');
    // Load that keeps the engine, the relay and both settlement consumers busy up to the stop.
    const placed = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        http('POST', `${api}/oms/order`, {
          token: session,
          body: {
            accountId: DEMO_ACCOUNTS[0]!.id,
            symbol: 'AAPL',
            side: 'BUY',
            type: 'MARKET',
            timeInForce: 'DAY',
            quantity: String(1 + (i % 3)),
          },
        }),
      ),
    );
    expect(placed.map((r) => r.status)).toEqual(Array(20).fill(201));
    const processes = [child.pid!, ...childrenOf(child.pid!)];
    expect(processes.length).toBeGreaterThanOrEqual(4); // the primary, two workers, PostgreSQL

    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    process.kill(-child.pid!, 'SIGINT');
    const code = await exited;
    expect({ code, tail: code === 0 ? '' : platform.output().slice(-2000) }).toEqual({ code: 0, tail: '' });
    const output = platform.output();
    const errorLines = output
      .split('\n')
      .filter((line) => /"level":(50|60)/.test(line) || /^(error|fatal) \(/.test(line) || /^\s+at /.test(line));
    expect(errorLines).toEqual([]);
    for (const pid of processes) {
      let gone = false;
      for (let i = 0; i < 50 && !gone; i++) {
        try {
          process.kill(pid, 0);
          await new Promise((r) => setTimeout(r, 100));
        } catch {
          gone = true;
        }
      }
      expect([pid, gone]).toEqual([pid, true]);
    }
  }, 120_000);
});
