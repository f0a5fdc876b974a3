import type { RequestHandler, Response } from 'express';
import { rateLimited, rateLimitHeaders, RequestLimiter, tightest, type LimitState } from './index';
import type { KeyValueStore } from '@trading/redis';
import type { Registry } from 'prom-client';
import { rateLimitRefusals, type RefusalCounter } from './refusals';

export interface ApiLimitSettings {
  API_RATE_LIMIT_PER_MINUTE: number;
  API_ORDER_RATE_LIMIT_PER_MINUTE: number;
  API_ADDRESS_RATE_LIMIT_PER_MINUTE: number;
  API_RATE_LIMIT_NAMESPACE: string;
}

/** Who a budget belongs to: the PAT, or the user's grant to one app (a new session does not reset it). */
export interface LimitedCaller {
  sub: string;
  patId?: string;
  clientId?: string;
}

const tokenKey = (caller: LimitedCaller) => (caller.patId ? `pat:${caller.patId}` : `app:${caller.clientId ?? '-'}:${caller.sub}`);

/**
 * The edges' request limits (facade and gateway share the counts, so a token has one budget):
 * per client address before authentication, per token after it, and a tighter one for order
 * placement. A refusal is 429 with Retry-After and RateLimit-* headers; every answer carries
 * the RateLimit-* headers of the tightest budget it used.
 */
export class ApiLimits {
  private readonly perAddress: RequestLimiter;
  private readonly perToken: RequestLimiter;
  private readonly orders: RequestLimiter;
  private readonly refusals: RefusalCounter | undefined;

  /** `metrics`: where refusals are counted (`rate_limit_refusals_total` by budget), when given. */
  constructor(store: KeyValueStore, settings: ApiLimitSettings, metrics?: Registry) {
    this.refusals = metrics ? rateLimitRefusals(metrics, ['address', 'token', 'orders']) : undefined;
    const namespace = settings.API_RATE_LIMIT_NAMESPACE;
    this.perAddress = new RequestLimiter(store, namespace, { name: 'address', perMinute: settings.API_ADDRESS_RATE_LIMIT_PER_MINUTE });
    this.perToken = new RequestLimiter(store, namespace, { name: 'token', perMinute: settings.API_RATE_LIMIT_PER_MINUTE });
    this.orders = new RequestLimiter(store, namespace, { name: 'orders', perMinute: settings.API_ORDER_RATE_LIMIT_PER_MINUTE });
  }

  /** Express middleware: the per-address budget, for every request (tokens or not). */
  byAddress(): RequestHandler {
    return async (req, res, next) => {
      next(this.decide(res, [await this.perAddress.take(req.ip ?? 'unknown')], ['address']));
    };
  }

  /** The caller's budgets once it is known; throws the 429 when one is spent. */
  async forCaller(res: Response, caller: LimitedCaller, placesOrder: boolean): Promise<void> {
    const key = tokenKey(caller);
    const states = [await this.perToken.take(key)];
    if (placesOrder) states.push(await this.orders.take(key));
    const refusal = this.decide(res, states, placesOrder ? ['token', 'orders'] : ['token']);
    if (refusal) throw refusal;
  }

  /** `names[i]` is the budget `states[i]` was taken from (the label of a refusal). */
  private decide(res: Response, states: Array<LimitState | undefined>, names: string[]) {
    const spent = states.findIndex((s) => s?.blocked);
    if (spent >= 0) this.refusals?.inc({ limit: names[spent] });
    const used = states.filter((s): s is LimitState => !!s);
    if (!used.length) return undefined;
    const current = res.locals['rateLimit'] as LimitState | undefined;
    const state = tightest(current ? [current, ...used] : used);
    res.locals['rateLimit'] = state;
    res.set(rateLimitHeaders(state));
    return state.blocked ? rateLimited(state, 'Too many requests; retry after the time in Retry-After') : undefined;
  }
}
