import { AppError } from '@trading/errors';
import type { Claims } from './claims';

/**
 * Idempotency keys, one rule for the facade's `Idempotency-Key` header and the
 * subgraphs' `idempotencyKey` argument: 1 to 255 visible ASCII characters, no spaces.
 */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export function parseIdempotencyKey(value: unknown, field = 'idempotencyKey'): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !IDEMPOTENCY_KEY.test(value))
    throw new AppError('BAD_USER_INPUT', `${field} must be 1 to 255 visible ASCII characters (no spaces)`, { field });
  return value;
}

/**
 * Whose key it is: the user as one PAT or one vendor app acts for them. A vendor app cannot
 * pre-claim (or read the result of) keys the user's own scripts or another app will use.
 */
export function idempotencyOwner(claims: Pick<Claims, 'sub' | 'patId' | 'clientId'>): string {
  return `${claims.sub}|${claims.patId ? `pat:${claims.patId}` : `app:${claims.clientId ?? '-'}`}`;
}
