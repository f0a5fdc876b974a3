import type { Request, RequestHandler, Response } from 'express';
import { rateLimited, rateLimitHeaders, RequestLimiter, tightest, type LimitState } from './index';
import { BudgetChain, takeInTurn } from './budget-chain';
import type { KeyValueStore } from '@trading/redis';
import type { Registry } from 'prom-client';
import { rateLimitRefusals, type RefusalCounter } from './refusals';

export interface ApiLimitSettings {
  API_RATE_LIMIT_PER_MINUTE: number;
  API_ORDER_RATE_LIMIT_PER_MINUTE: number;
  API_ADDRESS_RATE_LIMIT_PER_MINUTE: number;
  /** Unset or 0: no budget per vendor app. */
  API_APP_RATE_LIMIT_PER_MINUTE?: number | undefined;
  /** Unset: 4 × API_RATE_LIMIT_PER_MINUTE (so 0 there turns it off too). */
  API_USER_RATE_LIMIT_PER_MINUTE?: number | undefined;
  /** Unset: 4 × API_ORDER_RATE_LIMIT_PER_MINUTE. */
  API_USER_ORDER_RATE_LIMIT_PER_MINUTE?: number | undefined;
  API_RATE_LIMIT_NAMESPACE: string;
}

/** How many tokens' worth of budget a user gets over all their tokens, unless told otherwise. */
const USER_BUDGET_TOKENS = 4;

/** Who a budget belongs to: the PAT, or the user's grant to one app (a new session does not reset it). */
export interface LimitedCaller {
  sub: string;
  patId?: string;
  clientId?: string;
}

const tokenKey = (caller: LimitedCaller) => (caller.patId ? `pat:${caller.patId}` : `app:${caller.clientId ?? '-'}:${caller.sub}`);
const userKey = (caller: LimitedCaller) => `user:${caller.sub}`;
const appKey = (caller: LimitedCaller) => `app:${caller.clientId}`;

type BudgetName = 'address' | 'token' | 'app' | 'user' | 'orders' | 'user-orders';
/** A budget as charged: its limiter (named for refusals) and whose key it counts under. */
type Budget = [RequestLimiter, (caller: LimitedCaller) => string];

/**
 * The edges' request limits (facade and gateway share the counts, so a token has one budget):
 * per client address only for requests with no token or a failing one (a flood guard: a vendor
 * backend's thousands of users share its few addresses); per token, per vendor app (over all its
 * users) and per user (over all the user's PATs and app grants, so more tokens buy no more) once
 * authenticated; and tighter ones, per token and per user, for order placement. A refusal is 429 with Retry-After and RateLimit-* headers; every
 * answer carries the RateLimit-* headers of the tightest budget it used.
 *
 * A token's refused requests are not charged to its user: one token (a leaked PAT, a runaway
 * vendor app) can spend at most its own budget of its user's, never lock the other tokens out.
 */
export class ApiLimits {
  private readonly perAddress: RequestLimiter;
  private readonly perToken: RequestLimiter;
  private readonly perApp: RequestLimiter;
  private readonly perUser: RequestLimiter;
  private readonly orders: RequestLimiter;
  private readonly userOrders: RequestLimiter;
  private readonly refusals: RefusalCounter | undefined;
  /** On Redis: every budget of a request charged in one round trip. */
  private readonly chain: BudgetChain | undefined;

  /** `metrics`: where refusals are counted (`rate_limit_refusals_total` by budget), when given. */
  constructor(store: KeyValueStore, settings: ApiLimitSettings, metrics?: Registry) {
    this.refusals = metrics ? rateLimitRefusals(metrics, ['address', 'token', 'app', 'user', 'orders', 'user-orders']) : undefined;
    this.chain = BudgetChain.on(store);
    const namespace = settings.API_RATE_LIMIT_NAMESPACE;
    const limiter = (name: BudgetName, perMinute: number) => new RequestLimiter(store, namespace, { name, perMinute });
    this.perAddress = limiter('address', settings.API_ADDRESS_RATE_LIMIT_PER_MINUTE);
    this.perToken = limiter('token', settings.API_RATE_LIMIT_PER_MINUTE);
    this.perApp = limiter('app', settings.API_APP_RATE_LIMIT_PER_MINUTE ?? 0);
    this.perUser = limiter('user', settings.API_USER_RATE_LIMIT_PER_MINUTE ?? USER_BUDGET_TOKENS * settings.API_RATE_LIMIT_PER_MINUTE);
    this.orders = limiter('orders', settings.API_ORDER_RATE_LIMIT_PER_MINUTE);
    this.userOrders = limiter(
      'user-orders',
      settings.API_USER_ORDER_RATE_LIMIT_PER_MINUTE ?? USER_BUDGET_TOKENS * settings.API_ORDER_RATE_LIMIT_PER_MINUTE,
    );
  }

  /** Express middleware: the per-address budget, for requests that present no token (a failing one is charged by `refuseUnknown`). */
  byAddress(): RequestHandler {
    return async (req, res, next) => {
      if (req.get('authorization')) return next();
      next(this.decide(res, [await this.perAddress.take(req.ip ?? 'unknown')]));
    };
  }

  /**
   * A token that failed authentication: charged to its address, so a flood of bad tokens meets
   * the same guard as one of none. Throws the 429 once the address's budget is spent, else `err`.
   */
  async refuseUnknown(req: Request, res: Response, err: unknown): Promise<never> {
    if (!req.get('authorization')) throw err; // no token at all: byAddress charged it already
    throw this.decide(res, [await this.perAddress.take(req.ip ?? 'unknown')]) ?? err;
  }

  /** One request of a known caller: its token's, its vendor app's and its user's budgets; throws the 429 when one is spent. */
  async forCaller(res: Response, caller: LimitedCaller): Promise<void> {
    const app: Budget[] = caller.clientId && !caller.patId ? [[this.perApp, appKey]] : [];
    await this.charge(res, caller, 1, [[this.perToken, tokenKey], ...app, [this.perUser, userKey]]);
  }

  /**
   * `count` order placements in one request (a GraphQL operation may hold several): charged
   * whole or not at all, so an operation over the budget is refused before any of it runs.
   */
  async forOrders(res: Response, caller: LimitedCaller, count = 1): Promise<void> {
    if (count > 0)
      await this.charge(res, caller, count, [
        [this.orders, tokenKey],
        [this.userOrders, userKey],
      ]);
  }

  /**
   * The budgets in order, narrowest first (token, then app, then user): each is charged only while
   * the ones before it allowed the request, so a refusal by the token's own budget costs the app
   * and the user nothing (see the class comment). On Redis, one script does it all.
   */
  private async charge(res: Response, caller: LimitedCaller, points: number, budgets: Budget[]): Promise<void> {
    const steps = budgets.filter(([limiter]) => limiter.on).map(([limiter, key]) => ({ limiter, key: key(caller) }));
    // A refused request of several points gives them back: what was refused never ran.
    const giveBack = points > 1;
    const taken = this.chain ? await this.chain.take(steps, points, giveBack) : await takeInTurn(steps, points, giveBack);
    const refusal = this.decide(res, taken);
    if (refusal) throw refusal;
  }

  private decide(res: Response, taken: Array<LimitState | undefined>) {
    const used = taken.filter((s): s is LimitState => !!s);
    const spent = used.find((s) => s.blocked);
    if (spent) this.refusals?.inc({ limit: spent.budget! });
    if (!used.length) return undefined;
    const current = res.locals['rateLimit'] as LimitState | undefined;
    const state = tightest(current ? [current, ...used] : used);
    res.locals['rateLimit'] = state;
    res.set(rateLimitHeaders(state));
    return state.blocked ? rateLimited(state, 'Too many requests; retry after the time in Retry-After') : undefined;
  }
}
