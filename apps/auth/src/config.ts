import { commonSchema, field, loadConfig, z } from '@trading/config';

/** A positive whole number with a default. */
const count = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const authConfigSchema = z.object({
  ...commonSchema,
  AUTH_PORT: field.port(8081),
  AUTH_DATABASE_URL: field.postgresUrl(),
  /** The issuer in every access token: the auth app's public address ({login_url}). */
  AUTH_ISSUER: field.url().default('http://localhost:8081'),
  /** Bearer credential of the admin API used by `npm run admin`. */
  AUTH_ADMIN_TOKEN: z.string().min(24, 'must be at least 24 characters'),
  PAT_SESSION_TTL_SECONDS: field.seconds(900),
  /** Proxies whose X-Forwarded-For is believed (the facade); Express `trust proxy` values. */
  AUTH_TRUST_PROXY: field.list().default(['loopback']),
  /** Lifetime of a developer-dashboard browser session. */
  DASHBOARD_SESSION_TTL_SECONDS: field.seconds(8 * 3600),
  /** Failed PAT logins allowed per client address, then 429 until the window ends. */
  PAT_LOGIN_MAX_FAILURES_PER_IP: count(20),
  /** Failed PAT logins allowed per token id (distributed guessing of one token's secret). */
  PAT_LOGIN_MAX_FAILURES_PER_TOKEN: count(10),
  /** Failed dashboard sign-ins allowed per account (e-mail) and per client address. */
  SIGNIN_MAX_FAILURES_PER_ACCOUNT: count(5),
  SIGNIN_MAX_FAILURES_PER_IP: count(50),
  /** The window every failure limit above counts in. */
  LOGIN_FAILURE_WINDOW_SECONDS: field.seconds(900),
});

export type AuthConfig = z.output<typeof authConfigSchema>;

export const loadAuthConfig = (env: NodeJS.ProcessEnv = process.env): AuthConfig => loadConfig('auth', authConfigSchema, env);

/** Settings added with the developer dashboard; callers that build the config object themselves (the platform) may leave them out. */
const dashboardSchema = authConfigSchema.pick({
  DASHBOARD_SESSION_TTL_SECONDS: true,
  PAT_LOGIN_MAX_FAILURES_PER_IP: true,
  PAT_LOGIN_MAX_FAILURES_PER_TOKEN: true,
  SIGNIN_MAX_FAILURES_PER_ACCOUNT: true,
  SIGNIN_MAX_FAILURES_PER_IP: true,
  LOGIN_FAILURE_WINDOW_SECONDS: true,
});
export type DashboardSettings = z.output<typeof dashboardSchema>;
export const dashboardConfigDefaults = (): DashboardSettings => dashboardSchema.parse({});

/** What createAuthApp takes: a full config, except that the dashboard settings default. */
export type AuthAppConfig = Omit<AuthConfig, keyof DashboardSettings> & Partial<DashboardSettings>;
