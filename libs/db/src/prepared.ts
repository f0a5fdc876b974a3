import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * A statement PostgreSQL parses and plans once per connection (a named prepared statement):
 * for reads served on every request, where TypeORM's query building and PostgreSQL's planning
 * of the same text each time cost more than the read. The name must be unique in the service.
 */
export interface PreparedStatement {
  name: string;
  text: string;
}

/** Runs a prepared statement on the DataSource's own pool (same connections, metrics and tracing as every other query). */
export async function queryPrepared<T>(dataSource: DataSource, statement: PreparedStatement, values: unknown[]): Promise<T[]> {
  const pool = (dataSource.driver as unknown as { master: Pool }).master;
  const result = await pool.query({ name: statement.name, text: statement.text, values });
  return result.rows as T[];
}
