import { serviceIdentityFields } from '@trading/auth';
import {
  accountChangesSchema,
  accountsCacheSchema,
  commonSchema,
  databaseSessionSchema,
  settlementConsumerSchema,
  field,
  loadConfig,
  z,
} from '@trading/config';

const accountsConfigSchema = z.object({
  ...commonSchema,
  ...serviceIdentityFields('accounts'),
  /** Public listener: health only. */
  ACCOUNTS_PORT: field.port(4001),
  /** Internal listener: /graphql for the gateway and sibling services, /metrics. */
  ACCOUNTS_INTERNAL_PORT: field.port(4101),
  ACCOUNTS_DATABASE_URL: field.postgresUrl(),
  ...databaseSessionSchema,
  ...accountsCacheSchema,
  /** Every change its cache hears is passed on here, with a signed "listening" each second while it hears them. */
  ...accountChangesSchema,
  /** The stream the OMS publishes settlement events to; accounts reads it as consumer group `accounts`. */
  EVENTS_STREAM: z.string().min(1).default('trading:oms:events'),
  ...settlementConsumerSchema,
});

export type AccountsConfig = z.output<typeof accountsConfigSchema>;

export const loadAccountsConfig = (env: NodeJS.ProcessEnv = process.env): AccountsConfig =>
  loadConfig('accounts', accountsConfigSchema, env);
