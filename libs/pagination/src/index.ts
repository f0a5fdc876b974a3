import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '@trading/errors';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** A page of results; `nextCursor` is null on the last page. */
export interface Page<T> {
  nodes: T[];
  nextCursor: string | null;
}

/** `limit`: 1..100, default 20. */
export function parseLimit(value: unknown, field = 'limit'): number {
  if (value === undefined || value === null) return DEFAULT_LIMIT;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_LIMIT) {
    throw new AppError('BAD_USER_INPUT', `${field} must be an integer from 1 to ${MAX_LIMIT}`, { field });
  }
  return n;
}

/**
 * Opaque cursors: the position as JSON, base64url, with an HMAC so a client cannot forge or
 * edit one (a tampered cursor is a clean 400, never a strange query or a 500).
 */
export class CursorCodec {
  constructor(private readonly secret: string) {}

  encode(position: Record<string, string | number>): string {
    const body = Buffer.from(JSON.stringify(position)).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  decode<T extends Record<string, string | number>>(cursor: unknown, keys: (keyof T & string)[], field = 'cursor'): T | null {
    if (cursor === undefined || cursor === null || cursor === '') return null;
    const invalid = () => new AppError('BAD_USER_INPUT', `${field} is not a cursor this list returned`, { field });
    if (typeof cursor !== 'string' || cursor.length > 512) throw invalid();
    const [body, mac, ...rest] = cursor.split('.');
    if (!body || !mac || rest.length) throw invalid();
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid();
    let position: unknown;
    try {
      position = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    if (!position || typeof position !== 'object' || keys.some((k) => !['string', 'number'].includes(typeof (position as Record<string, unknown>)[k]))) throw invalid();
    return position as T;
  }

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url').slice(0, 22);
  }
}

/**
 * `from`/`to` filters: a date (`2026-01-31`, whole UTC day; `to` inclusive) or an RFC 3339
 * timestamp. Returns [from, toExclusive].
 */
export function parseDateRange(from: unknown, to: unknown): { from: Date | null; to: Date | null } {
  const start = parseInstant(from, 'from', false);
  const end = parseInstant(to, 'to', true);
  if (start && end && start >= end) throw new AppError('BAD_USER_INPUT', 'from must be before to', { field: 'from' });
  return { from: start, to: end };
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

function parseInstant(value: unknown, field: string, endOfDay: boolean): Date | null {
  if (value === undefined || value === null || value === '') return null;
  const bad = () => new AppError('BAD_USER_INPUT', `${field} must be a date (YYYY-MM-DD) or an RFC 3339 timestamp`, { field });
  if (typeof value !== 'string') throw bad();
  if (DATE.test(value)) {
    const day = new Date(`${value}T00:00:00.000Z`);
    if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== value) throw bad();
    return endOfDay ? new Date(day.getTime() + 86400_000) : day;
  }
  if (!TIMESTAMP.test(value)) throw bad();
  const instant = new Date(value);
  if (Number.isNaN(instant.getTime())) throw bad();
  return instant;
}
