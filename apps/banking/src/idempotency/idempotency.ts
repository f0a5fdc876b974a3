import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { IDEMPOTENCY_KEY_LIFETIME_HOURS } from '@trading/auth';
import { AppError } from '@trading/errors';

export { parseIdempotencyKey } from '@trading/auth';

/** The request as canonical JSON (keys sorted), hashed: what "the same request" means. */
export function requestHash(operation: string, request: Record<string, unknown>): string {
  const canonical = JSON.stringify({ operation, request }, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * DESIGN §6 Idempotency-Key, per owner (the user through one PAT or app: idempotencyOwner) and
 * key, for IDEMPOTENCY_KEY_LIFETIME_HOURS. Call inside the transaction that performs the
 * effect: the key's row is inserted first, so a concurrent duplicate waits on the unique index
 * until this transaction ends, then finds the stored result (or, if this one rolled back, goes
 * ahead itself). Exactly one effect, whatever the timing.
 *
 * Returns the stored result of an earlier identical request, or null when the caller should
 * perform the effect and then `remember` its result in the same transaction.
 */
export async function claimIdempotencyKey<T>(tx: EntityManager, userId: string, key: string, hash: string): Promise<T | null> {
  await tx.query(`DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND created_at < now() - make_interval(hours => $3)`, [userId, key, IDEMPOTENCY_KEY_LIFETIME_HOURS]);
  const inserted: unknown[] = await tx.query(
    `INSERT INTO idempotency_keys (user_id, key, request_hash) VALUES ($1, $2, $3) ON CONFLICT (user_id, key) DO NOTHING RETURNING key`,
    [userId, key, hash],
  );
  if (inserted.length) return null;
  const [stored] = await tx.query('SELECT request_hash, response FROM idempotency_keys WHERE user_id = $1 AND key = $2', [userId, key]);
  if (stored.request_hash !== hash) {
    throw new AppError('UNPROCESSABLE', 'This idempotencyKey was already used with a different request', { field: 'idempotencyKey' });
  }
  return stored.response as T;
}

export async function rememberIdempotentResult(tx: EntityManager, userId: string, key: string, result: unknown): Promise<void> {
  await tx.query('UPDATE idempotency_keys SET response = $3 WHERE user_id = $1 AND key = $2', [userId, key, JSON.stringify(result)]);
}

/** Keys past their lifetime answer nothing any more: delete them (the clearing worker's pass). */
export async function purgeExpiredIdempotencyKeys(dataSource: { query(sql: string, params?: unknown[]): Promise<unknown> }): Promise<void> {
  await dataSource.query('DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)', [IDEMPOTENCY_KEY_LIFETIME_HOURS]);
}
