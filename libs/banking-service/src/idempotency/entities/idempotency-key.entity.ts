import { EntitySchema } from 'typeorm';

/** The first result of a request made with an Idempotency-Key, per user and key. */
export interface IdempotencyKey {
  userId: string;
  key: string;
  requestHash: string;
  response: unknown;
  createdAt: Date;
}

export const IdempotencyKeyEntity = new EntitySchema<IdempotencyKey>({
  name: 'IdempotencyKey',
  tableName: 'idempotency_keys',
  columns: {
    userId: { type: 'text', name: 'user_id', primary: true },
    key: { type: 'text', primary: true },
    requestHash: { type: 'text', name: 'request_hash' },
    response: { type: 'jsonb', nullable: true },
    createdAt: { type: 'timestamptz', name: 'created_at', createDate: true },
  },
});
