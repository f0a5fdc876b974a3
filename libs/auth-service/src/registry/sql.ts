/**
 * TypeORM's PostgreSQL `query()` answers an UPDATE or DELETE with `[rows, rowCount]` and any
 * other statement with the rows; this gives the rows either way (for `UPDATE … RETURNING`).
 */
export function returnedRows<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as T[];
  return result as T[];
}
