import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { AppError } from '@trading/errors';

/** A key answers its first request's result for this long; after it, the key is free again. */
const IDEMPOTENCY_KEY_LIFETIME_HOURS = 24;

type Queryable = Pick<EntityManager, 'query'>;

/** The request as canonical JSON (keys sorted, at every depth), hashed: what "the same request" means. */
export function requestHash(operation: string, request: unknown): string {
  const canonical = JSON.stringify({ operation, request }, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * Idempotency keys in one table of the service's database: `(user_id, key)` unique, the
 * request's hash, the result (the answer itself, or the id of what the effect made) and
 * `created_at`. The rule everywhere: claim the key inside the transaction that performs the
 * effect (the row is inserted first, so a concurrent duplicate waits on the unique index until
 * that transaction ends, then finds the result, or goes ahead itself if it rolled back); the
 * same key with another request is a 422 naming `idempotencyKey`; after
 * IDEMPOTENCY_KEY_LIFETIME_HOURS the key is free again.
 */
export class IdempotencyKeys<R> {
  /** Table and column names are this service's constants, never input. */
  constructor(
    private readonly table: string,
    private readonly resultColumn: string,
    /** What the result column holds until `remember` (for a NOT NULL column). */
    private readonly pending: unknown = null,
  ) {}

  /**
   * Inside the effect's transaction: `first` when this request is the key's first (perform the
   * effect, then `remember` its result in the same transaction); otherwise the earlier result.
   */
  async claim(tx: Queryable, owner: string, key: string, hash: string): Promise<{ first: true } | { first: false; result: R }> {
    await tx.query(`DELETE FROM ${this.table} WHERE user_id = $1 AND key = $2 AND created_at < now() - make_interval(hours => $3)`, [
      owner,
      key,
      IDEMPOTENCY_KEY_LIFETIME_HOURS,
    ]);
    const inserted: unknown[] = await tx.query(
      `INSERT INTO ${this.table} (user_id, key, request_hash, ${this.resultColumn}) VALUES ($1, $2, $3, $4) ON CONFLICT (user_id, key) DO NOTHING RETURNING key`,
      [owner, key, hash, this.pending],
    );
    if (inserted.length) return { first: true };
    return { first: false, result: (await this.earlier(tx, owner, key, hash))! };
  }

  /**
   * The claim as a common table expression named `claimed` (one row when this request is the
   * key's first), for a single statement that performs the effect only then and stores its result
   * with it: parameters owner, key, hash and result at `$first` to `$first + 3`. A key that exists,
   * expired or not, yields no row: the caller then takes the transactional path (`claim`).
   */
  claimedCte(first: number): string {
    const [owner, key, hash, result] = [first, first + 1, first + 2, first + 3].map((n) => `$${n}`);
    return `claimed AS (INSERT INTO ${this.table} (user_id, key, request_hash, ${this.resultColumn}) VALUES (${owner}, ${key}, ${hash}, ${result})
      ON CONFLICT (user_id, key) DO NOTHING RETURNING key)`;
  }

  /** The earlier result for this key, if any, outside a transaction too (a fast path before the work). */
  async earlier(db: Queryable, owner: string, key: string, hash: string): Promise<R | undefined> {
    const [stored] = await db.query(
      `SELECT request_hash, ${this.resultColumn} AS result FROM ${this.table} WHERE user_id = $1 AND key = $2 AND created_at >= now() - make_interval(hours => $3)`,
      [owner, key, IDEMPOTENCY_KEY_LIFETIME_HOURS],
    );
    if (!stored) return undefined;
    if (stored.request_hash !== hash)
      throw new AppError('UNPROCESSABLE', 'This Idempotency-Key was already used with a different request', { field: 'idempotencyKey' });
    return stored.result as R;
  }

  async remember(tx: Queryable, owner: string, key: string, result: R): Promise<void> {
    await tx.query(`UPDATE ${this.table} SET ${this.resultColumn} = $3 WHERE user_id = $1 AND key = $2`, [
      owner,
      key,
      typeof result === 'string' ? result : JSON.stringify(result),
    ]);
  }

  /** Keys past their lifetime answer nothing any more: delete them (a retention pass). */
  async purgeExpired(db: Queryable): Promise<void> {
    await db.query(`DELETE FROM ${this.table} WHERE created_at < now() - make_interval(hours => $1)`, [IDEMPOTENCY_KEY_LIFETIME_HOURS]);
  }
}
