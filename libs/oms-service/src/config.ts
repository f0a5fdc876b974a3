import { serviceIdentityFields } from '@trading/auth';
import { accountChangesSchema, commonSchema, databaseSessionSchema, field, loadConfig, z } from '@trading/config';
import { tradingHoursProblem } from './market/trading-hours';

const millis = (fallback: number, min: number) => z.coerce.number().int().min(min).max(86_400_000).default(fallback);
const decimal = (fallback: string) =>
  z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'must be a decimal such as 0.05')
    .default(fallback);

/** OMS_TRADING_HOURS, checked as the market reads it (the all-in-one passes the same setting on). */
export const tradingHoursSetting = z
  .string()
  .default('always')
  .superRefine((spec, ctx) => {
    const problem = tradingHoursProblem(spec);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const omsConfigSchema = z.object({
  ...commonSchema,
  ...serviceIdentityFields('oms'),
  /** Public listener: health only. */
  OMS_PORT: field.port(4003),
  /** Internal listener: /graphql for the gateway, /metrics. */
  OMS_INTERNAL_PORT: field.port(4103),
  OMS_DATABASE_URL: field.postgresUrl(),
  ...databaseSessionSchema,
  /** The stream fills and order closes are published to; banking and accounts read it. */
  EVENTS_STREAM: z.string().min(1).default('trading:oms:events'),
  /** Banking's internal listener: the hold API lives at /internal/holds, balances at /graphql. */
  BANKING_URL: field.url().default('http://localhost:4102'),
  /** The accounts subgraph's internal listener: ownership of an account and the position a sell needs. */
  ACCOUNTS_URL: field.url().default('http://localhost:4101/graphql'),
  /**
   * Users whose accounts an instance remembers between orders (owner, type, currency, status), dropped the
   * moment accounts announces a change to its owner on ACCOUNT_CHANGES_STREAM; nothing is answered
   * from memory unless accounts' signed "listening" arrived within the last 3 s. 0: ask accounts
   * on every order.
   */
  OMS_ACCOUNT_CACHE_ENTRIES: z.coerce.number().int().min(0).max(10_000_000).default(50_000),
  /**
   * Instruments an instance remembers between orders, dropped the moment one changes (the
   * `instruments_changed` trigger: a price step, a halt) and read from the database whenever the
   * notifications are not being heard. 0: read the instrument on every order.
   */
  OMS_INSTRUMENTS_CACHE_ENTRIES: z.coerce.number().int().min(0).max(1_000_000).default(10_000),
  ...accountChangesSchema,
  /** Seed of the simulated price feed: the same seed and start prices give the same prices, step by step. */
  OMS_PRICE_SEED: z.coerce.number().int().default(20260101),
  /** How often the feed moves prices one step; 0 pauses it (tests step it themselves). */
  OMS_PRICE_TICK_MS: millis(1000, 0),
  /** Standard deviation of one step's relative move. */
  OMS_PRICE_VOLATILITY: decimal('0.002'),
  /** How often the execution engine looks at working orders. */
  OMS_ENGINE_INTERVAL_MS: millis(200, 10),
  /** Most the paper market fills per instrument and side per engine pass, and never more than the size quoted there (bigger orders fill in parts). */
  OMS_FILL_LIQUIDITY: decimal('1000'),
  /** Market (and stop) buys reserve, and never pay, more than the ask (at the stop, for stops) times (1 + collar). */
  OMS_MARKET_COLLAR: decimal('0.05'),
  /** Commission: this fraction of the traded value, in the instrument's currency. */
  OMS_COMMISSION_RATE: decimal('0.0005'),
  /** The least an order that trades pays in commission, in the instrument's currency. */
  OMS_MIN_COMMISSION: decimal('1.00'),
  /** Limit and stop prices must lie within this fraction of the last price (0.5 = ±50 %). */
  OMS_PRICE_BAND: decimal('0.5'),
  /** Working orders one account may have at once; more are refused (422 naming accountId). */
  OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: z.coerce.number().int().positive().default(200),
  /** The most one order may be worth, in the instrument's currency (422 naming quantity above it). */
  OMS_MAX_ORDER_VALUE: decimal('10000000'),
  /** `always`, an exchange calendar (`US`, `XETRA`: weekends, holidays, early closes), or a daily UTC session `HH:MM-HH:MM` (past midnight if it closes before it opens); DAY orders expire at the session's end. */
  OMS_TRADING_HOURS: tradingHoursSetting,
  /** The capped Redis stream each price change's quotes are published on; the facade's live quotes (GET /v1/market/events) read it. */
  MARKET_TICKS_STREAM: z.string().min(1).default('trading:market:ticks'),
  /** About how many entries that stream keeps (it is read live only; older entries are trimmed). */
  MARKET_TICKS_STREAM_MAX_LEN: z.coerce.number().int().min(100).max(1_000_000).default(10_000),
  /**
   * Pages of price bars an instance reads at once; more wait their turn. A page may hold 10,000
   * bars, so this keeps however many charting calls arrive together to a share of the database
   * pool (10 connections) and of the processor: orders, quotes and cash never wait behind them.
   */
  OMS_BAR_READS: z.coerce.number().int().min(1).max(8).default(2),
  /** Days of ticks (every price the feed sets) kept for bars; older ones are pruned hourly. */
  OMS_MARKET_TICK_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(7),
  /** A quote's bid-ask spread as a fraction of the last price (each side rounded up to whole ticks, at least one). */
  OMS_QUOTE_SPREAD: decimal('0.001'),
  /** A buy still ACCEPTED this long after placement (its hold never confirmed, e.g. banking was down) is rejected and its hold released. */
  OMS_ACCEPT_TIMEOUT_MS: millis(60_000, 1000),
  /** How often the relay publishes outbox rows to the stream. */
  OMS_RELAY_INTERVAL_MS: millis(100, 10),
});

export type OmsConfig = z.output<typeof omsConfigSchema>;

export const loadOmsConfig = (env: NodeJS.ProcessEnv = process.env): OmsConfig => loadConfig('oms', omsConfigSchema, env);
