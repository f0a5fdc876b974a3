import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '@trading/errors';

export const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

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

type Position = Record<string, string | number>;

/**
 * Opaque cursors: the position as JSON, base64url, with an HMAC so a client cannot forge or
 * edit one (a tampered cursor is a clean 400, never a strange query or a 500). Each cursor also
 * names the list it was issued for (its scope, e.g. `orders:<accountId>`), so a genuine cursor
 * from another list or another account is refused rather than silently paging something else.
 */
export class CursorCodec {
  constructor(private readonly secret: string) {}

  encode(scope: string, position: Position): string {
    const body = Buffer.from(JSON.stringify({ ...position, _: scope })).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  decode<T extends Position>(cursor: unknown, scope: string, keys: (keyof T & string)[], field = 'cursor'): T | null {
    if (cursor === undefined || cursor === null || cursor === '') return null;
    const invalid = () => new AppError('BAD_USER_INPUT', `${field} is not a cursor this list returned`, { field });
    const { _: issuedFor, ...fields } = this.signedPosition(cursor, invalid);
    if (issuedFor !== scope || keys.some((k) => !['string', 'number'].includes(typeof fields[k]))) throw invalid();
    return fields as T;
  }

  /** The position a cursor carries, once its signature is ours; anything else is `invalid()`. */
  private signedPosition(cursor: unknown, invalid: () => AppError): Record<string, unknown> {
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
    if (!position || typeof position !== 'object') throw invalid();
    return position as Record<string, unknown>;
  }

  /**
   * The page from rows fetched with `LIMIT limit + 1`: the extra row only says another page
   * exists; the cursor points after the last row served.
   */
  page<R, N>(rows: R[], limit: number, scope: string, positionOf: (last: R) => Position, present: (row: R) => N): Page<N> {
    const served = rows.slice(0, limit);
    const last = served[served.length - 1];
    return {
      nodes: served.map(present),
      nextCursor: rows.length > limit && last !== undefined ? this.encode(scope, positionOf(last)) : null,
    };
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
