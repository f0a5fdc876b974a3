import { createLogger } from '@trading/logging';
import { startPeriodic } from './periodic';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('startPeriodic', () => {
  const logger = createLogger('periodic-test', 'silent');

  it('never runs two passes at once, however slow a pass is, and stop waits for the one under way', async () => {
    let running = 0;
    let most = 0;
    let finished = 0;
    const task = startPeriodic(
      'slow',
      5,
      async () => {
        running += 1;
        most = Math.max(most, running);
        await sleep(40);
        running -= 1;
        finished += 1;
      },
      logger,
    );
    await sleep(120);
    await task.stop();
    const afterStop = finished;
    expect(most).toBe(1);
    expect(running).toBe(0); // the pass under way ended before stop returned
    await sleep(60);
    expect(finished).toBe(afterStop); // and none started after
    expect(afterStop).toBeGreaterThanOrEqual(2);
  });

  it('goes on after a failing pass, and idle() waits for the pass under way', async () => {
    let calls = 0;
    let inPass = false;
    const task = startPeriodic(
      'flaky',
      5,
      async () => {
        calls += 1;
        inPass = true;
        await sleep(20);
        inPass = false;
        if (calls === 1) throw new Error('first pass fails');
      },
      logger,
    );
    await sleep(15);
    await task.idle();
    expect(inPass).toBe(false);
    await sleep(60);
    expect(calls).toBeGreaterThanOrEqual(2);
    await task.stop();
  });

  it('wake() runs a pass now rather than at the interval, and wakes during a pass come to one more pass, never two at once', async () => {
    let passes = 0;
    let running = 0;
    let most = 0;
    const task = startPeriodic(
      'woken',
      3_600_000,
      async () => {
        running += 1;
        most = Math.max(most, running);
        passes += 1;
        await sleep(30);
        running -= 1;
      },
      logger,
    );
    await sleep(20);
    expect(passes).toBe(0); // an hour's interval: nothing yet
    const waitFor = async (done: () => boolean) => {
      for (let i = 0; i < 200 && !done(); i++) await sleep(10);
    };
    task.wake();
    await waitFor(() => passes === 1);
    expect(passes).toBe(1);
    task.wake(); // during the pass: one more right after it
    task.wake();
    await waitFor(() => passes === 2 && running === 0);
    await sleep(50);
    expect(passes).toBe(2);
    expect(most).toBe(1);
    await task.stop();
    task.wake(); // stopped: nothing
    await sleep(20);
    expect(passes).toBe(2);
  });
});
