import { randomBytes } from 'node:crypto';
import { InternalClaimsCodec, SCOPES, type Claims } from '@trading/auth';
import type { Express } from 'express';
import { dropDatabase, ensureDatabase, withDatabaseName } from '@trading/db';
import { listen, type RunningServer } from '@trading/service';

/** The machine's PostgreSQL server (trust auth) and Redis; override for other set-ups. */
export const TEST_POSTGRES_URL = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const TEST_REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** A unique, valid identifier fragment for one test run (databases, Redis prefixes). */
export function uniqueId(): string {
  return `${process.pid.toString(36)}${randomBytes(4).toString('hex')}`;
}

export interface TestDatabases<N extends string> {
  urls: Record<N, string>;
  drop(): Promise<void>;
}

/** Creates throwaway databases `t_<run>_<name>` on the test server; `drop()` removes them. */
export async function createTestDatabases<N extends string>(names: readonly N[]): Promise<TestDatabases<N>> {
  const run = uniqueId();
  const urls = {} as Record<N, string>;
  for (const name of names) {
    urls[name] = withDatabaseName(TEST_POSTGRES_URL, `t_${run}_${name.replace(/-/g, '_')}`);
    await ensureDatabase(urls[name]);
  }
  return {
    urls,
    drop: async () => {
      for (const url of Object.values<string>(urls)) await dropDatabase(url);
    },
  };
}

/** A Redis key prefix no other test run shares. */
export function testKeyPrefix(): string {
  return `test:${uniqueId()}:`;
}

/** A 32+ character secret for the internal claims header in tests. */
export function testSecret(): string {
  return randomBytes(32).toString('hex');
}

/** JSON over fetch, returning status, headers and parsed body. */
export async function http(
  method: string,
  url: string,
  options: { body?: unknown; token?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  const res = await fetch(url, { method, headers, body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, headers: res.headers, body };
}

/** Sends a GraphQL operation straight to a subgraph as the edge would: with signed internal claims. */
export async function askSubgraph(url: string, secret: string, query: string, claims: Partial<Claims> & { sub: string }, variables?: Record<string, unknown>) {
  const header = await new InternalClaimsCodec(secret).sign({ sid: 'test-session', kind: 'pat', scope: [...SCOPES], ...claims });
  return http('POST', url, { body: { query, variables }, headers: { 'x-internal-claims': header } });
}
export * from './openapi';

/** An app on its own throwaway database, listening on a free port; `stop()` undoes all three. */
export interface ServiceOnTestDatabase<S> {
  service: S;
  server: RunningServer;
  databaseUrl: string;
  stop(): Promise<void>;
}

export async function startOnTestDatabase<S extends { app: Express; close(): Promise<void> }>(
  database: string,
  create: (databaseUrl: string) => Promise<S>,
): Promise<ServiceOnTestDatabase<S>> {
  const dbs = await createTestDatabases([database]);
  const databaseUrl = dbs.urls[database]!;
  let service: S | undefined;
  try {
    service = await create(databaseUrl);
    const server = await listen(service.app, 0, '127.0.0.1');
    const started = service;
    return {
      service: started,
      server,
      databaseUrl,
      stop: async () => {
        await server.close();
        await started.close();
        await dbs.drop();
      },
    };
  } catch (err) {
    await service?.close();
    await dbs.drop();
    throw err;
  }
}
