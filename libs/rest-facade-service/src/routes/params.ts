import type { Request } from 'express';
import { parseIdempotencyKey } from '@trading/auth';
import { z } from '@trading/config';
import { AppError, errors, parseUuid } from '@trading/errors';
import { parseLimit } from '@trading/pagination';

/**
 * Shape checks at the edge: types and formats, each failure a 400 naming the field. The rules
 * about values (amount precision, currencies, states) live in the subgraph that owns them.
 */

export function uuidParam(req: Request, name: string): string {
  return parseUuid(req.params[name], name);
}

/** An optional single query parameter (repeated parameters are refused). */
export function queryParam(req: Request, name: string): string | undefined {
  const value = req.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw errors.badInput(name, `${name} must be given once`);
  return value;
}

export function requiredQueryParam(req: Request, name: string): string {
  const value = queryParam(req, name);
  if (!value) throw errors.badInput(name, `${name} is required`);
  return value;
}

export function enumQueryParam<T extends string>(req: Request, name: string, values: readonly T[]): T | undefined {
  const value = queryParam(req, name);
  if (value === undefined) return undefined;
  if (!(values as readonly string[]).includes(value)) throw errors.badInput(name, `${name} must be one of ${values.join(', ')}`);
  return value as T;
}

/** An optional `true` / `false` query parameter (absent: undefined). */
export function booleanQueryParam(req: Request, name: string): boolean | undefined {
  const value = queryParam(req, name);
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') throw errors.badInput(name, `${name} must be true or false`);
  return value === 'true';
}

/** `limit`, `cursor`, `from`, `to` of every list endpoint. */
export function listParams(req: Request): { limit: number; cursor?: string; from?: string; to?: string } {
  return {
    limit: parseLimit(queryParam(req, 'limit')),
    cursor: queryParam(req, 'cursor'),
    from: queryParam(req, 'from'),
    to: queryParam(req, 'to'),
  };
}

/** The JSON body against a zod schema; the first problem becomes a 400 naming the field. */
export function jsonBody<S extends z.ZodType>(req: Request, schema: S): z.output<S> {
  if (!req.is('application/json')) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json', { field: 'body' });
  const result = schema.safeParse(req.body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  // A strict schema's unknown field: named as the field at fault, so a misspelt one is not taken for the body.
  if (issue.code === 'unrecognized_keys') {
    const field = [...issue.path, issue.keys[0]!].join('.');
    throw errors.badInput(field, `Unknown field ${JSON.stringify(field.slice(0, 40))}`);
  }
  const field = issue.path.join('.') || 'body';
  throw errors.badInput(field, field === 'body' ? 'The body must be a JSON object' : `${field}: ${issue.message}`);
}

/** The `Idempotency-Key` header of money-moving POSTs: a retry with the same key and body gets the first result. */
export function idempotencyKey(req: Request): string | undefined {
  const key = req.get('idempotency-key');
  if (key === undefined) return undefined;
  return parseIdempotencyKey(key, 'Idempotency-Key') ?? undefined;
}

/** Unknown accounts and other users' accounts look the same: 404. */
export function ownAccount<T>(data: { account?: T | null }): T {
  if (!data.account) throw errors.notFound('Account', 'accountId');
  return data.account;
}
