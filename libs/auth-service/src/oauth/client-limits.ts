import type { Request, Response } from 'express';
import {
  rateLimitHeaders,
  tightest,
  type FailureLimiter,
  type LimitState,
  type RefusalCounter,
  type RequestLimiter,
} from '@trading/rate-limit';
import { OAuthError } from './errors';

/**
 * The token and revocation endpoints' limits, which never lock out a vendor's legitimate calls:
 * failed client authentications count per (client, address) and per address — a stranger
 * guessing at a public client_id from elsewhere costs the vendor nothing, and a request with the
 * right secret is never refused for anyone's failures; successful calls have a budget per
 * authenticated client, sized for a backend refreshing tokens for many users from one address.
 */
export interface ClientLimits {
  perClientAddress: FailureLimiter;
  perAddress: FailureLimiter;
  perClient: RequestLimiter;
  /** Each 429 counted by budget: `oauth_client_auth_failures`, `oauth_address`, `oauth_client`. */
  refusals: RefusalCounter;
}

/** A spent failure budget: its state and the `limit` label its refusals are counted under. */
export interface FailuresBlocked {
  state: LimitState;
  budget: 'oauth_client_auth_failures' | 'oauth_address';
}

const failureKeys = (clientId: string, req: Request) => {
  const address = req.ip ?? 'unknown';
  return { clientAddress: `${clientId.slice(0, 100)}|${address}`, address };
};

/** 429 in RFC 6749's vocabulary (no RFC defines a rate-limit error; this is the overload one), with Retry-After. */
const throttled = (detail: string, retryAfterSeconds: number) =>
  new OAuthError('temporarily_unavailable', `${detail}; retry after the time in Retry-After`, 429, {
    'Retry-After': String(retryAfterSeconds),
  });

/** Whether failures from here for this client are over the limit (checked before the secret, acted on only if it is wrong). */
export async function failuresBlocked(limits: ClientLimits, clientId: string, req: Request): Promise<FailuresBlocked | null> {
  const keys = failureKeys(clientId, req);
  // Asked on every token request: `ifBlocked` reads a count with no failures from memory where the store tracks reads.
  const [perClientAddress, perAddress] = await Promise.all([
    limits.perClientAddress.ifBlocked(keys.clientAddress),
    limits.perAddress.ifBlocked(keys.address),
  ]);
  if (!perClientAddress && !perAddress) return null;
  const state = tightest([perClientAddress, perAddress].filter((s): s is LimitState => !!s));
  return { state, budget: state === perClientAddress ? 'oauth_client_auth_failures' : 'oauth_address' };
}

/** The 429 for a wrong secret once failures are over the limit, counted under the budget it reports. */
export function failuresRefused(limits: ClientLimits, blocked: FailuresBlocked) {
  limits.refusals.inc({ limit: blocked.budget });
  return throttled('Too many failed client authentications from this address', blocked.state.resetSeconds);
}

export async function countFailure(limits: ClientLimits, clientId: string, req: Request): Promise<void> {
  const keys = failureKeys(clientId, req);
  await Promise.all([limits.perClientAddress.fail(keys.clientAddress), limits.perAddress.fail(keys.address)]);
}

/** Spends one call of the authenticated client's budget; throws the 429 when it is spent. */
export async function spendClientBudget(limits: ClientLimits, clientId: string, res: Response): Promise<void> {
  const state = await limits.perClient.take(clientId);
  if (!state) return;
  res.set(rateLimitHeaders(state));
  if (!state.blocked) return;
  limits.refusals.inc({ limit: 'oauth_client' });
  throw throttled('This app made too many token requests', state.resetSeconds);
}
