import { createHash } from 'node:crypto';
import { errors } from '@trading/errors';
import { RedisStore, type KeyValueStore } from '@trading/redis';
import type { LimitState, RequestLimiter } from './index';

/**
 * The budgets' fixed-window counters, charged narrowest first: each is counted only while the
 * ones before it allowed the request, and a refusal of several points gives them all back. The
 * same steps as rate-limiter-flexible's own script, per counter, under the same keys.
 * KEYS: the counters. ARGV: points, 1 to give back on refusal, then each counter's limit and window (s).
 * Returns consumed and milliseconds left for each counter charged.
 */
const CHAIN_SCRIPT = `
local points = tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS do
  local limit, window = tonumber(ARGV[1 + 2 * i]), tonumber(ARGV[2 + 2 * i])
  redis.call('SET', KEYS[i], 0, 'EX', window, 'NX')
  local consumed = redis.call('INCRBY', KEYS[i], points)
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl == -1 then
    redis.call('EXPIRE', KEYS[i], window)
    ttl = 1000 * window
  end
  out[2 * i - 1] = consumed
  out[2 * i] = ttl
  if consumed > limit then
    if ARGV[2] == '1' then
      for j = 1, i do redis.call('DECRBY', KEYS[j], points) end
    end
    break
  end
end
return out`;

const CHAIN_SHA = createHash('sha1').update(CHAIN_SCRIPT).digest('hex');

/** One budget of a chain: its limiter and the caller's key under it. */
export interface ChainStep {
  limiter: RequestLimiter;
  key: string;
}

/**
 * Several request budgets charged in one Redis round trip, with the semantics of charging them one
 * after another (`ApiLimits`). Every authenticated request pays its token's, app's and user's
 * budgets, and an order its two order budgets: one script instead of a round trip each, on a path
 * where each round trip is two system calls and a wake-up on a machine shared with everything else.
 * Only for real Redis: the memory store answers in-process anyway.
 */
export class BudgetChain {
  private constructor(private readonly store: RedisStore) {}

  /** A chain on `store`, or undefined where it is not Redis. */
  static on(store: KeyValueStore): BudgetChain | undefined {
    return store instanceof RedisStore ? new BudgetChain(store) : undefined;
  }

  /**
   * Charges `points` to each step in order until one is spent; the states of the steps charged
   * (the last one blocked, when one was). `giveBack`: a refused request returns its points to
   * every counter it was charged to.
   */
  async take(steps: readonly ChainStep[], points: number, giveBack: boolean): Promise<LimitState[]> {
    // Stryker disable next-line ConditionalExpression: an empty chain's script answers nothing too; this only saves the round trip
    if (!steps.length) return [];
    try {
      if (this.store.cluster) return await this.takeStepByStep(steps, points, giveBack);
      return this.states(steps, await this.run(steps, points, giveBack));
    } catch {
      // Fail closed: without the counters a caller's budget would be unlimited.
      throw errors.unavailable('Rate limiting is temporarily unavailable; retry shortly');
    }
  }

  /**
   * On a Redis Cluster a token's, an app's and a user's counters live in different slots, and a
   * script may touch one slot only: each counter is charged by the same script on its own, in
   * turn, and a refused request's points are given back to those before it after the refusal.
   * Each counter still counts atomically, so no budget is ever spent beyond its limit; in the gap
   * a concurrent request may see a count about to be given back, and is refused when it would
   * have passed, never the other way round.
   */
  private async takeStepByStep(steps: readonly ChainStep[], points: number, giveBack: boolean): Promise<LimitState[]> {
    const states: LimitState[] = [];
    for (const [i, step] of steps.entries()) {
      const [state] = this.states([step], await this.run([step], points, giveBack));
      states.push(state!);
      if (!state!.blocked) continue;
      if (giveBack) await Promise.all(steps.slice(0, i).map((s) => this.store.client.decrBy(s.limiter.storeKey(s.key), points)));
      break;
    }
    return states;
  }

  /** The chain script over `steps`, by its SHA; the first call after a Redis restart (NOSCRIPT) sends the text once. */
  private async run(steps: readonly ChainStep[], points: number, giveBack: boolean): Promise<number[]> {
    const args = {
      keys: steps.map((s) => s.limiter.storeKey(s.key)),
      arguments: [
        String(points),
        giveBack ? '1' : '0',
        ...steps.flatMap((s) => [String(s.limiter.limit), String(s.limiter.windowSeconds)]),
      ],
    };
    const reply = await this.store.client.evalSha(CHAIN_SHA, args).catch((err: Error) => {
      // Stryker disable next-line ConditionalExpression,StringLiteral: sending the text after any other error fails the same way, one round trip later
      if (!err.message.startsWith('NOSCRIPT')) throw err;
      return this.store.client.eval(CHAIN_SCRIPT, args);
    });
    return (reply as unknown[]).map(Number);
  }

  private states(steps: readonly ChainStep[], counts: number[]): LimitState[] {
    const states: LimitState[] = [];
    // Stryker disable next-line EqualityOperator: the script answers two numbers per counter, so `<=` reads the same pairs
    for (let i = 0; i + 1 < counts.length; i += 2) states.push(steps[i / 2]!.limiter.stateAfter(counts[i]!, counts[i + 1]!));
    return states;
  }
}

/**
 * The chain's semantics one budget at a time: for the memory store (the all-in-one without
 * Redis), whose counters live in this process anyway.
 */
export async function takeInTurn(steps: readonly ChainStep[], points: number, giveBack: boolean): Promise<LimitState[]> {
  const taken: LimitState[] = [];
  for (const { limiter, key } of steps) {
    const state = (await limiter.take(key, points))!;
    taken.push(state);
    if (state.blocked) break;
  }
  if (giveBack && taken.at(-1)?.blocked) for (const { limiter, key } of steps.slice(0, taken.length)) await limiter.refund(key, points);
  return taken;
}
