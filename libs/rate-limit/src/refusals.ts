import { Counter, type Registry } from 'prom-client';

/** `rate_limit_refusals_total`: requests refused with 429, by `limit`, the budget that refused them. */
export type RefusalCounter = Counter<'limit'>;

const counters = new WeakMap<Registry, RefusalCounter>();

/**
 * The refusal counter of `registry`, created on first use: every limiter of a service counts
 * into the same one (a second `new Counter` of that name would throw), and every service under
 * the same name and label, so one query by `limit` covers the facade's, the gateway's and auth's
 * refusals alike. Each of `limits` starts at 0, so its series exists (and rate() works) before the
 * first refusal.
 */
export function rateLimitRefusals(registry: Registry, limits: readonly string[] = []): RefusalCounter {
  let counter = counters.get(registry);
  if (!counter) {
    counter = new Counter({
      name: 'rate_limit_refusals_total',
      help: 'Requests refused with 429 by budget',
      labelNames: ['limit'],
      registers: [registry],
    });
    counters.set(registry, counter);
  }
  for (const limit of limits) counter.inc({ limit }, 0);
  return counter;
}
