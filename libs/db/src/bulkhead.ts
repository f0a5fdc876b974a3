/**
 * At most `slots` runs of one kind of work at once; the others wait their turn, first come first
 * served. A service gives its heavy reads (pages of price bars) a few of its database pool's
 * connections this way, so however many of them arrive together, the rest of the pool (and the
 * processor) stays free for the work that must not wait: orders, quotes, cash.
 */
export class Bulkhead {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly slots: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`A bulkhead needs at least one slot, not ${slots}`);
  }

  /** Runs `work` once a slot is free; its slot passes to the next waiting run when it settles. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.slots) this.running++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Runs in progress and runs waiting, for metrics and tests. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}
