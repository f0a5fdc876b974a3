/** A database opened as a service opens it, on one pooled session: its backend's pid is what /proc measures. */
import { openDatabase, type DatabaseOptions, type DataSource } from '@trading/db';

export async function openOneSession(
  url: string,
  migrations: DatabaseOptions['migrations'],
  settings: Record<string, string> = {},
): Promise<{ db: DataSource; backend: number }> {
  const db = await openDatabase({ url, entities: [], migrations, poolSize: 1, settings });
  const [{ pid }]: Array<{ pid: number }> = await db.query('SELECT pg_backend_pid() AS pid');
  return { db, backend: pid };
}
