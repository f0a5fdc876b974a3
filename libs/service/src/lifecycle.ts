import type { Logger } from '@trading/logging';

/**
 * What a composition root opened, in the order it opened it. `close` closes everything in the
 * reverse order, once (later calls wait for the first), and goes on past a step that fails,
 * throwing an AggregateError at the end. `build` runs the opening steps and, if one of them
 * throws, closes what was opened so far before passing the error on: a half-built app never
 * leaves a pool, a connection or a timer behind. A step still closing after `slowStepMs` is
 * reported by name (`onSlowStep`), so a shutdown that hangs says where.
 */
export class Lifecycle {
  /** A composition root's lifecycle: a slow shutdown step is logged as `<app>: a shutdown step is slow`, naming the step. */
  static of(app: string, logger: Pick<Logger, 'warn'>, slowStepMs?: number): Lifecycle {
    return new Lifecycle({ slowStepMs, onSlowStep: (step, ms) => logger.warn({ step, ms }, `${app}: a shutdown step is slow`) });
  }

  private readonly steps: Array<{ name: string; close: () => unknown }> = [];
  private closing: Promise<void> | undefined;

  constructor(private readonly watch: { slowStepMs?: number; onSlowStep?: (name: string, ms: number) => void } = {}) {}

  /** Remembers how to close something just opened, and returns it. */
  own<T>(name: string, thing: T, close: (thing: T) => unknown): T {
    this.steps.push({ name, close: () => close(thing) });
    return thing;
  }

  /** Remembers a closing step that is not tied to one value (stop a worker, end a timer). */
  defer(name: string, close: () => unknown): void {
    this.steps.push({ name, close });
  }

  async build<T>(open: (life: this) => Promise<T>): Promise<T> {
    try {
      return await open(this);
    } catch (err) {
      await this.close().catch(() => undefined); // the opening error is the one worth reporting
      throw err;
    }
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      const failures: Error[] = [];
      const { slowStepMs = 5000, onSlowStep } = this.watch;
      for (const step of this.steps.splice(0).reverse()) {
        const slow = onSlowStep ? setTimeout(() => onSlowStep(step.name, slowStepMs), slowStepMs).unref() : undefined;
        try {
          await step.close();
        } catch (err) {
          failures.push(new Error(`closing ${step.name} failed: ${(err as Error)?.message ?? String(err)}`, { cause: err }));
        } finally {
          clearTimeout(slow);
        }
      }
      if (failures.length) throw new AggregateError(failures, failures.map((f) => f.message).join('; '));
    })();
    return this.closing;
  }
}
