import { serviceIdentityFields } from '@trading/auth';
import { commonSchema, databaseSessionSchema, field, loadConfig, settlementConsumerSchema, z } from '@trading/config';

/** `true`/`false` from the environment, or a boolean when the launcher builds the config itself. */
const flag = (fallback: boolean) => z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]).default(fallback);
const millis = (fallback: number, min: number) => z.coerce.number().int().min(min).max(86_400_000).default(fallback);
/** How often banking's outbox relay publishes, unless BANKING_RELAY_INTERVAL_MS says otherwise. */
export const RELAY_INTERVAL_MS = 100;

const bankingConfigSchema = z.object({
  ...commonSchema,
  ...serviceIdentityFields('banking'),
  /** Public listener: health only. */
  BANKING_PORT: field.port(4002),
  /** Internal listener: /graphql for the gateway, /internal/holds for the OMS, /metrics. */
  BANKING_INTERNAL_PORT: field.port(4102),
  BANKING_DATABASE_URL: field.postgresUrl(),
  ...databaseSessionSchema,
  /** The accounts subgraph, asked whether the caller owns the account a mutation names. */
  ACCOUNTS_URL: field.url().default('http://localhost:4101/graphql'),
  /** Simulated clearing settles a pending deposit or withdrawal this long after it was made. */
  BANKING_CLEARING_DELAY_MS: millis(3000, 0),
  /** How often the clearing worker looks for due transactions. */
  BANKING_CLEARING_POLL_MS: millis(250, 10),
  /** Sandbox: requests may force the clearing outcome with `sandboxOutcome`. Turn off in production. */
  BANKING_SANDBOX: flag(true),
  /** Sale proceeds settle this many business days after the trade (T+1); until then tradable, not withdrawable. 0: at once. */
  BANKING_SETTLEMENT_DAYS: z.coerce.number().int().min(0).max(10).default(1),
  /** The most one deposit or withdrawal may move (422 naming amount above it). */
  BANKING_MAX_TRANSACTION_AMOUNT: z
    .string()
    .regex(/^\d{1,12}(\.\d{1,2})?$/, 'must be a decimal such as 10000000')
    .default('10000000'),
  /**
   * The stream the OMS publishes settlement events to; banking reads it as consumer group `banking`
   * and publishes its own funding events to it (signed with SERVICE_KEY).
   */
  EVENTS_STREAM: z.string().min(1).default('trading:oms:events'),
  /**
   * How often banking's outbox relay publishes its outbox rows (funding events) to EVENTS_STREAM.
   * Optional in the type: a config built in code (the all-in-one launcher) may leave it to the default.
   */
  BANKING_RELAY_INTERVAL_MS: millis(RELAY_INTERVAL_MS, 10).optional(),
  ...settlementConsumerSchema,
});

export type BankingConfig = z.output<typeof bankingConfigSchema>;

export const loadBankingConfig = (env: NodeJS.ProcessEnv = process.env): BankingConfig => loadConfig('banking', bankingConfigSchema, env);
