import { IdempotencyKeys } from '@trading/db';

/**
 * Orders by Idempotency-Key: the key keeps the order's id, a placeholder until the order row
 * exists (written in the same transaction).
 */
export const orderIdempotency = new IdempotencyKeys<string>('order_idempotency_keys', 'order_id', '00000000-0000-0000-0000-000000000000');
