import { Gauge, type Registry } from 'prom-client';
import type { DataSource } from 'typeorm';

interface PgPool {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/**
 * The connection pool on /metrics: connections open, idle, and requests waiting for one. A
 * pool at its size with requests waiting is the first sign a service needs more connections
 * (or a slow query holds them).
 */
export function databasePoolMetrics(registry: Registry, dataSource: DataSource): void {
  new Gauge({
    name: 'db_pool_connections',
    help: 'Database pool connections by state (total open, idle) and requests waiting for one',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const pool = (dataSource.driver as unknown as { master?: PgPool }).master;
      if (!pool) return;
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
}
