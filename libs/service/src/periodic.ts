import type { Logger } from '@trading/logging';

export interface PeriodicTask {
  /** Stops scheduling and waits for a pass under way. */
  stop(): Promise<void>;
  /** Waits for the pass under way, if any (scheduling goes on). */
  idle(): Promise<void>;
  /**
   * Runs a pass now rather than at the next interval: at once when none is under way, else right
   * after the one under way (wakes while it runs come to one pass). For work that has just arrived.
   */
  wake(): void;
}

/**
 * Runs `task` every `intervalMs`: the next pass is scheduled only when one ends (passes never
 * overlap, however slow one is), a failing pass is logged and the next one comes as usual, and
 * `stop` waits for the pass in progress.
 */
export function startPeriodic(name: string, intervalMs: number, task: () => Promise<unknown>, logger: Logger): PeriodicTask {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  /** A wake arrived while a pass ran: the next one follows at once. */
  let woken = false;
  const run = () => {
    timer = undefined;
    woken = false;
    running = task()
      .then(() => undefined)
      .catch((err: unknown) => logger.error({ err, task: name }, `${name} failed; trying again in ${intervalMs} ms`))
      .finally(() => {
        running = undefined;
        schedule(woken ? 0 : intervalMs);
      });
  };
  const schedule = (delayMs: number) => {
    if (stopped) return;
    timer = setTimeout(run, delayMs);
    timer.unref();
  };
  schedule(intervalMs);
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
    idle: async () => {
      await running;
    },
    wake: () => {
      if (stopped) return;
      if (running) woken = true;
      else if (timer) {
        clearTimeout(timer);
        schedule(0);
      }
    },
  };
}
