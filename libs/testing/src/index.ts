import { randomBytes } from 'node:crypto';
import {
  exportServiceKey,
  generateServiceKey,
  INTERNAL_CLAIMS_HEADER,
  InternalClaimsSigner,
  InternalClaimsVerifier,
  SCOPES,
  SERVICE_NAMES,
  TrustedServiceKeys,
  type Claims,
  type ServiceKey,
  type ServiceName,
} from '@trading/auth';
import express, { type Express } from 'express';
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

/** Service keys for one test run: each service its own, all trusting each other's public keys (as the platform wires them). */
export class TestKeys {
  private readonly keys = Object.fromEntries(SERVICE_NAMES.map((s) => [s, generateServiceKey(s)])) as Record<ServiceName, ServiceKey>;
  readonly trusted = TrustedServiceKeys.of(...Object.values(this.keys));

  /** SERVICE_KEY and SERVICE_TRUSTED_KEYS for one service's config. */
  identity(service: ServiceName): { SERVICE_KEY: ServiceKey; SERVICE_TRUSTED_KEYS: TrustedServiceKeys } {
    return { SERVICE_KEY: this.keys[service], SERVICE_TRUSTED_KEYS: this.trusted };
  }

  /** The same as environment variables (JSON), for a service's `load…Config(env)`. */
  env(service: ServiceName): Record<string, string> {
    return { SERVICE_KEY: exportServiceKey(this.keys[service]), SERVICE_TRUSTED_KEYS: JSON.stringify(this.trusted) };
  }

  signer(service: ServiceName): InternalClaimsSigner {
    return new InternalClaimsSigner(this.keys[service]);
  }

  /** Signs claims as `from` would for `to` (default: the gateway calling a subgraph). */
  sign(claims: Claims, to: ServiceName, from: ServiceName = 'gateway'): Promise<string> {
    return this.signer(from).sign(claims, to);
  }
}

export const testKeys = (): TestKeys => new TestKeys();

/** JSON over fetch, returning status, headers and parsed body. */
export async function http(
  method: string,
  url: string,
  options: { body?: unknown; token?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  const res = await fetch(url, {
    method,
    headers,
    body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, headers: res.headers, body };
}

/** The sample lines (`name{labels} value`) of a Prometheus `/metrics` page. */
export async function scrapeMetrics(metricsUrl: string): Promise<string[]> {
  const res = await fetch(metricsUrl);
  if (res.status !== 200) throw new Error(`${metricsUrl} answered ${res.status}`);
  return (await res.text()).split('\n').filter((l) => l && !l.startsWith('#'));
}

/** The value of the sample of `name` whose labels include `labels` (every metric also has `service`); undefined when there is none. */
export function sampleValue(lines: string[], name: string, labels: Record<string, string> = {}): number | undefined {
  const line = lines.find((l) => {
    if (!l.startsWith(`${name}{`) && !l.startsWith(`${name} `)) return false;
    return Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`));
  });
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** Sends a GraphQL operation straight to a subgraph's internal listener as the gateway would: with claims signed for it. */
export async function askSubgraph(
  url: string,
  to: { keys: TestKeys; subgraph: ServiceName },
  query: string,
  claims: Partial<Claims> & { sub: string },
  variables?: Record<string, unknown>,
) {
  const header = await to.keys.sign({ sid: 'test-session', kind: 'pat', scope: [...SCOPES], ...claims }, to.subgraph);
  return http('POST', url, { body: { query, variables }, headers: { 'x-internal-claims': header } });
}
/**
 * The columns of `table` a statement's column list leaves out, and the names it lists that the
 * table lacks: both empty when a prepared statement's named columns are every column of the row.
 */
export async function columnListGaps(
  db: { query(sql: string, params: unknown[]): Promise<Array<{ column_name: string }>> },
  table: string,
  list: string,
): Promise<{ missing: string[]; unknown: string[] }> {
  const actual = (await db.query('SELECT column_name FROM information_schema.columns WHERE table_name = $1', [table])).map(
    (r) => r.column_name,
  );
  const named = list.split(',').map((c) => c.trim());
  return { missing: actual.filter((c) => !named.includes(c)), unknown: named.filter((c) => !actual.includes(c)) };
}

export * from './openapi';
export * from './ports';
export * from './tls';
export * from './world';

/** An app on its own throwaway database, listening on a free port; `stop()` undoes all three. */
export interface ServiceOnTestDatabase<S> {
  service: S;
  /** The public listener. */
  server: RunningServer;
  /** The internal listener (GraphQL, internal APIs, metrics). */
  internal: RunningServer;
  databaseUrl: string;
  stop(): Promise<void>;
}

export async function startOnTestDatabase<S extends { app: Express; internal: Express; close(): Promise<void> }>(
  database: string,
  create: (databaseUrl: string) => Promise<S>,
): Promise<ServiceOnTestDatabase<S>> {
  const dbs = await createTestDatabases([database]);
  const databaseUrl = dbs.urls[database]!;
  let service: S | undefined;
  try {
    service = await create(databaseUrl);
    const server = await listen(service.app, 0, '127.0.0.1');
    const internal = await listen(service.internal, 0, '127.0.0.1').catch(async (err) => {
      await server.close();
      throw err;
    });
    const started = service;
    return {
      service: started,
      server,
      internal,
      databaseUrl,
      stop: async () => {
        await server.close();
        await internal.close();
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

/**
 * A stand-in for the accounts subgraph's internal listener, for specs of a subgraph that asks it
 * who owns what: it checks the claims header like the real one and answers `accounts { id }`
 * and `account(id)` from `own(...)`.
 */
export async function startAccountsStandIn(
  keys: TestKeys,
): Promise<{ url: string; own(userId: string, accountId: string, status?: string): void; close(): Promise<void> }> {
  const owners = new Map<string, { userId: string; status: string }>();
  const verifier = new InternalClaimsVerifier('accounts', keys.trusted);
  const app = express().post('/graphql', express.json(), async (req, res) => {
    const claims = await verifier.verify(req.get(INTERNAL_CLAIMS_HEADER));
    if (!claims) return void res.status(401).json({ errors: [{ message: 'no claims', extensions: { code: 'UNAUTHENTICATED' } }] });
    if (/\baccounts\b/.test(String(req.body?.query))) {
      return void res.json({ data: { accounts: [...owners].filter(([, o]) => o.userId === claims.sub).map(([id]) => ({ id })) } });
    }
    const id = String(req.body?.variables?.id);
    const owner = owners.get(id);
    res.json({
      data: { account: owner && owner.userId === claims.sub ? { id, baseCurrency: 'USD', status: owner.status, type: 'CASH' } : null },
    });
  });
  const server = await listen(app, 0, '127.0.0.1');
  return {
    url: `${server.url}/graphql`,
    own: (userId, accountId, status = 'ACTIVE') => void owners.set(accountId, { userId, status }),
    close: () => server.close(),
  };
}
