import type { Logger } from '@trading/logging';

export interface PeriodicTask {
  /** Stops scheduling and waits for a pass under way. */
  stop(): Promise<void>;
  /** Waits for the pass under way, if any (scheduling goes on). */
  idle(): Promise<void>;
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
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = task()
        .then(() => undefined)
        .catch((err: unknown) => logger.error({ err, task: name }, `${name} failed; trying again in ${intervalMs} ms`))
        .finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  schedule();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
    idle: async () => {
      await running;
    },
  };
}
