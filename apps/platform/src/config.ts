import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { field, loadConfig, z } from '@trading/config';

/** All-in-one mode: embedded defaults, so `npm start` needs nothing set. */
export const platformConfigSchema = z.object({
  LOG_LEVEL: field.logLevel().default('warn'),
  /** A PostgreSQL server URL; unset = start an embedded PostgreSQL. Each service gets its own database on it. */
  DATABASE_URL: field.postgresUrl().optional(),
  REDIS_URL: field.redisUrl(),
  /** Where the embedded PostgreSQL keeps its data (reused by the next start). */
  PLATFORM_DATA_DIR: z.string().default(join(tmpdir(), 'trading-api-platform')),
  EMBEDDED_POSTGRES_PORT: field.port(54329),
  /** Prefix of the per-service database names (`<prefix>auth`, …). */
  PLATFORM_DB_PREFIX: z.string().regex(/^[a-z_][a-z0-9_]*$|^$/, 'lower-case letters, digits and _ only').default('trading_'),
  PLATFORM_SEED_DEMO: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  FACADE_PORT: field.port(8080),
  AUTH_PORT: field.port(8081),
  GATEWAY_PORT: field.port(4000),
  ACCOUNTS_PORT: field.port(4001),
  BANKING_PORT: field.port(4002),
  OMS_PORT: field.port(4003),
  /** Local development only; set a real one anywhere else. */
  AUTH_ADMIN_TOKEN: z.string().min(24, 'must be at least 24 characters').default('local-dev-admin-token-0000'),
  /** One process, so a fresh random key per start is enough. */
  INTERNAL_SIGNING_KEY: field.secret().default(() => randomBytes(32).toString('hex')),
  PAT_SESSION_TTL_SECONDS: field.seconds(900),
});

export type PlatformConfig = z.output<typeof platformConfigSchema>;

export const loadPlatformConfig = (env: NodeJS.ProcessEnv = process.env): PlatformConfig => loadConfig('platform', platformConfigSchema, env);
