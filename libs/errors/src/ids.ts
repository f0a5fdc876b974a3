import { AppError } from './index';

/** Every id in the platform is a UUID (any version: ids from PostgreSQL, the demo seed and tests alike). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_PATTERN.test(value);

/** An id from a request: a UUID (lower-cased), or a 400 naming the field. */
export function parseUuid(value: unknown, field: string): string {
  if (!isUuid(value)) throw new AppError('BAD_USER_INPUT', `${field} must be a UUID`, { field });
  return value.toLowerCase();
}
