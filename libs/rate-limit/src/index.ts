import { createHash } from 'node:crypto';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { AppError, errors } from '@trading/errors';
import { RedisStore, type KeyValueStore } from '@trading/redis';

/**
 * A limit on failed attempts (wrong passwords, wrong PAT secrets): brute force is made of
 * failures, so counting only those leaves honest callers alone however often they succeed.
 */
export interface FailureLimitRule {
  /** Part of every key, e.g. `pat-login:ip`. */
  name: string;
  /** Failures allowed in one window; once reached, every attempt is refused until the window ends. */
  maxFailures: number;
  windowSeconds: number;
}

/** Real Redis makes a count shared by every instance; the memory store is the all-in-one stand-in. */
function limiterOn(store: KeyValueStore, options: { keyPrefix: string; points: number; duration: number }) {
  return store instanceof RedisStore
    ? new RateLimiterRedis({ ...options, storeClient: store.client, useRedisPackage: true })
    : new RateLimiterMemory(options);
}

/** Where one key stands against its rule. */
export interface LimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window ends and the count starts again. */
  resetSeconds: number;
  windowSeconds: number;
  blocked: boolean;
  /** Which budget this is (`token`, `app`, `user`, `orders`, `address`, …): named in the headers so a client knows what to slow down. */
  budget?: string;
}

export class FailureLimiter {
  private readonly limiter: RateLimiterAbstract;
  /** Keys whose failures this process is counting now, and how many. */
  private readonly counting = new Map<string, number>();

  /**
   * `namespace` keeps deployments that share one Redis apart (each auth deployment passes its
   * database name), so neither counts the other's failures.
   */
  constructor(
    private readonly store: KeyValueStore,
    namespace: string,
    readonly rule: FailureLimitRule,
  ) {
    const options = { keyPrefix: `ratelimit:${namespace}:${rule.name}`, points: rule.maxFailures, duration: rule.windowSeconds };
    this.limiter = limiterOn(store, options);
  }

  /**
   * The state of `key` when it is blocked, else undefined: for a check made on every request. On
   * Redis the count is a tracked read (`getCached`: answered from memory until Redis says the
   * counter changed or expired), so a key with no failures, the usual case, costs no round trip;
   * only a key at its limit is read in full, for its time left.
   */
  async ifBlocked(key: string): Promise<LimitState | undefined> {
    // A failure this process is still counting is read in full, on the connection that counts it,
    // so after it: memory would answer the count before it until Redis's invalidation arrives, and
    // a caller quick enough could slip attempts past the limit in that gap.
    const hashed = hashKey(key);
    if (this.store instanceof RedisStore && !this.counting.has(hashed)) {
      let count: string | null;
      try {
        count = await this.store.getCached(this.limiter.getKey(hashed));
      } catch {
        throw errors.unavailable('Rate limiting is temporarily unavailable; retry shortly');
      }
      if (Number(count ?? 0) < this.rule.maxFailures) return undefined;
    }
    const state = await this.state(key);
    return state.blocked ? state : undefined;
  }

  /** Reads the count without adding to it. */
  async state(key: string): Promise<LimitState> {
    const res = await this.call(() => this.limiter.get(hashKey(key)));
    return this.toState(res);
  }

  /** Counts one failure and returns the state after it. */
  async fail(key: string): Promise<LimitState> {
    const hashed = hashKey(key);
    this.counting.set(hashed, (this.counting.get(hashed) ?? 0) + 1);
    try {
      return this.toState(await this.call(() => this.limiter.consume(hashed)));
    } finally {
      const left = this.counting.get(hashed)! - 1;
      if (left) this.counting.set(hashed, left);
      else this.counting.delete(hashed);
      if (this.store instanceof RedisStore) this.store.forgetCached([this.limiter.getKey(hashed)]);
    }
  }

  /** Forgets the failures of `key` (e.g. after a successful sign-in to that account). */
  async clear(key: string): Promise<void> {
    await this.call(() => this.limiter.delete(hashKey(key)));
  }

  private toState(res: RateLimiterRes | null): LimitState {
    const consumed = res?.consumedPoints ?? 0;
    const { maxFailures: limit, windowSeconds } = this.rule;
    return {
      limit,
      remaining: Math.max(0, limit - consumed),
      resetSeconds: res ? Math.max(1, Math.ceil(res.msBeforeNext / 1000)) : windowSeconds,
      windowSeconds,
      blocked: consumed >= limit,
      budget: this.rule.name,
    };
  }

  /** The library rejects with a RateLimiterRes when over the limit (a state, not a failure) and with an Error when the store fails. */
  private async call<T>(fn: () => Promise<T>): Promise<T | RateLimiterRes> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof RateLimiterRes) return err;
      // Fail closed, as session checks do: without the counters, guessing would be unlimited.
      throw errors.unavailable('Rate limiting is temporarily unavailable; retry shortly');
    }
  }
}

/**
 * A budget of requests per key per minute (per token, per client address, per order
 * placement): the answer for one request says whether it may go on. Counted in Redis, so every
 * instance of a service shares the count; a limit of 0 is off (benchmarks).
 */
export class RequestLimiter {
  private readonly limiter: RateLimiterAbstract | undefined;
  /** Requests (or points) allowed per window. */
  readonly limit: number;
  readonly windowSeconds: number;

  /** A rule per minute, or per a window of its own (`perWindow` in `windowSeconds`, e.g. mails per hour). */
  constructor(
    store: KeyValueStore,
    namespace: string,
    readonly rule: { name: string; perMinute: number } | { name: string; perWindow: number; windowSeconds: number },
  ) {
    [this.limit, this.windowSeconds] = 'perMinute' in rule ? [rule.perMinute, 60] : [rule.perWindow, rule.windowSeconds];
    if (this.limit <= 0) return;
    const options = { keyPrefix: `ratelimit:${namespace}:${rule.name}`, points: this.limit, duration: this.windowSeconds };
    this.limiter = limiterOn(store, options);
  }

  /** False when the limit is off (0): nothing is counted. */
  get on(): boolean {
    return this.limiter !== undefined;
  }

  /** The Redis key that counts `key` (the library's own, so `take` and a `BudgetChain` count the same requests). */
  storeKey(key: string): string {
    return this.limiter!.getKey(hashKey(key));
  }

  /** Counts one request (or `points` units of it); undefined when the limit is off. */
  async take(key: string, points = 1): Promise<LimitState | undefined> {
    if (!this.limiter) return undefined;
    let res: RateLimiterRes;
    try {
      res = await this.limiter.consume(hashKey(key), points);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw errors.unavailable('Rate limiting is temporarily unavailable; retry shortly');
      res = err;
    }
    return this.stateAfter(res.consumedPoints, res.msBeforeNext);
  }

  /** Where a key stands once `consumed` points of its window are used, `msLeft` before the window ends. */
  stateAfter(consumed: number, msLeft: number): LimitState {
    const limit = this.limit;
    return {
      limit,
      remaining: Math.max(0, limit - consumed),
      resetSeconds: Math.max(1, Math.ceil(msLeft / 1000)),
      windowSeconds: this.windowSeconds,
      blocked: consumed > limit,
      budget: this.rule.name,
    };
  }

  /** Gives back `points` taken for something that was refused after all. */
  async refund(key: string, points: number): Promise<void> {
    if (!this.limiter) return;
    try {
      await this.limiter.reward(hashKey(key), points);
    } catch {
      throw errors.unavailable('Rate limiting is temporarily unavailable; retry shortly');
    }
  }
}

/** Hashed keys keep e-mail addresses out of Redis and bound the length of caller-chosen keys. */
const hashKey = (key: string) => createHash('sha256').update(key).digest('base64url').slice(0, 32);

/** The state a caller should be told about: a blocked one first, else the one with least room left. */
export function tightest(states: LimitState[]): LimitState {
  return [...states].sort(
    (a, b) => Number(b.blocked) - Number(a.blocked) || a.remaining - b.remaining || b.resetSeconds - a.resetSeconds,
  )[0]!;
}

/** `RateLimit-*` (IETF draft, as most API gateways send them) and, when blocked, `Retry-After`. */
export function rateLimitHeaders(state: LimitState): Record<string, string> {
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(state.limit),
    'RateLimit-Remaining': String(state.remaining),
    'RateLimit-Reset': String(state.resetSeconds),
    // Named as the IETF draft's structured form has it (`"token";q=600;w=60`), so a client sees which budget binds.
    'RateLimit-Policy': state.budget
      ? `"${state.budget}";q=${state.limit};w=${state.windowSeconds}`
      : `${state.limit};w=${state.windowSeconds}`,
    // The spelling most broker and SaaS clients already read (GitHub's, Alpaca's): the reset as a Unix time.
    'X-RateLimit-Limit': String(state.limit),
    'X-RateLimit-Remaining': String(state.remaining),
    'X-RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + state.resetSeconds),
  };
  if (state.budget) headers['X-RateLimit-Budget'] = state.budget;
  if (state.blocked) headers['Retry-After'] = String(state.resetSeconds);
  return headers;
}

/** The 429 problem; `retryAfterSeconds` repeats the header in the body for clients that only read JSON. */
export function rateLimited(state: LimitState, detail = 'Too many failed attempts; retry later'): AppError {
  return new AppError('RATE_LIMITED', detail, {
    details: { retryAfterSeconds: state.resetSeconds, ...(state.budget ? { budget: state.budget } : {}) },
  });
}
export { BudgetChain, takeInTurn, type ChainStep } from './budget-chain';
export { ApiLimits } from './api-limits';
export { rateLimitRefusals, type RefusalCounter } from './refusals';
export { OAuthAddressBudget } from './oauth-address-budget';
export { HeldSlots } from './held-slots';
