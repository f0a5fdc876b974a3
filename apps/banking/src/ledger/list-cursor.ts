import { AppError } from '@trading/errors';
import type { CursorCodec } from '@trading/pagination';

export interface ListPosition {
  /** seq of the last row served */
  s: string;
  /** currency of the last row served (cash activity only) */
  c?: string;
}

/**
 * Cursors carry the list and account they were issued for, so a (signed) cursor from one list
 * or account is refused on another rather than silently paging something else.
 */
export function decodeListCursor(codec: CursorCodec, cursor: unknown, list: string, accountId: string): ListPosition | null {
  const position = codec.decode<{ l: string; a: string; s: string }>(cursor, ['l', 'a', 's']);
  if (!position) return null;
  if (position.l !== list || position.a !== accountId || !/^\d{1,19}$/.test(position.s)) {
    throw new AppError('BAD_USER_INPUT', 'cursor is not a cursor this list returned', { field: 'cursor' });
  }
  const c = (position as Record<string, unknown>)['c'];
  return { s: position.s, c: typeof c === 'string' ? c : undefined };
}

export function encodeListCursor(codec: CursorCodec, list: string, accountId: string, position: ListPosition): string {
  return codec.encode({ l: list, a: accountId, ...position } as Record<string, string>);
}
