import { field, loadConfig, z } from '@trading/config';

export const accountsConfigSchema = z.object({
  LOG_LEVEL: field.logLevel(),
  INTERNAL_SIGNING_KEY: field.secret(),
  ACCOUNTS_PORT: field.port(4001),
  ACCOUNTS_DATABASE_URL: field.postgresUrl(),
  /** Redis, for the OMS's settlement stream (fills). */
  REDIS_URL: field.redisUrl(),
  /** The stream the OMS publishes settlement events to; accounts reads it as consumer group `accounts`. */
  EVENTS_STREAM: z.string().min(1).default('trading:oms:events'),
});

export type AccountsConfig = z.output<typeof accountsConfigSchema>;

export const loadAccountsConfig = (env: NodeJS.ProcessEnv = process.env): AccountsConfig => loadConfig('accounts', accountsConfigSchema, env);
