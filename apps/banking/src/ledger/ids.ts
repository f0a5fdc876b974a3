import { AppError } from '@trading/errors';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

/** Ids are UUIDs; anything else is malformed input, named by its field. */
export function parseId(value: unknown, field: string): string {
  if (!isUuid(value)) throw new AppError('BAD_USER_INPUT', `${field} must be a UUID`, { field });
  return value.toLowerCase();
}
