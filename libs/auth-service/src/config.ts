import { homedir } from 'node:os';
import { join } from 'node:path';
import { serviceIdentityFields } from '@trading/auth';
import { commonSchema, databaseSessionSchema, edgeSessionSchema, field, loadConfig, oauthLimitSchema, z } from '@trading/config';

/** A positive whole number with a default. */
const count = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const authConfigSchema = z.object({
  ...commonSchema,
  ...serviceIdentityFields('auth'),
  /** The public listener's /oauth/* and /pat/login spend the facade's address budget: same limit, same namespace. */
  ...oauthLimitSchema,
  /**
   * What auth reads on every token request is kept in memory like the edges' sessions (a RESP3
   * tracking connection, invalidated by Redis at once): the signing keys' marks and version, the
   * address budgets' counters, sessions.
   */
  ...edgeSessionSchema,
  /** Public listener: login and consent pages, the dashboard, JWKS, OAuth metadata. */
  AUTH_PORT: field.port(8081),
  /** Internal listener: /oauth/* and /pat/* as proxied by the facade (signed client address and claims), /metrics. */
  AUTH_INTERNAL_PORT: field.port(8181),
  /** The admin API's own listener (npm run admin): loopback unless told otherwise. */
  AUTH_ADMIN_PORT: field.port(8189),
  AUTH_ADMIN_HOST: field.host('127.0.0.1'),
  /** Admin API calls allowed per client address per minute. */
  AUTH_ADMIN_MAX_REQUESTS_PER_MINUTE: z.coerce.number().int().positive().default(300),
  AUTH_DATABASE_URL: field.postgresUrl(),
  ...databaseSessionSchema,
  /** The issuer in every access token: the auth app's public address ({login_url}). */
  AUTH_ISSUER: field.url().default('http://localhost:8081'),
  /**
   * Encrypts the signing keys' private halves in the database (≥ 32 characters; keep it out of
   * the database's backups). Required outside DEV; in DEV it defaults to one derived from SERVICE_KEY.
   */
  AUTH_KEY_ENCRYPTION_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  /** How often every instance reloads the signing keys (a rotation reaches all of them within this). */
  AUTH_SIGNING_KEY_RELOAD_MS: z.coerce.number().int().min(100).default(5000),
  /** Bearer credential of the admin API used by `npm run admin`. */
  AUTH_ADMIN_TOKEN: z.string().min(24, 'must be at least 24 characters'),
  PAT_SESSION_TTL_SECONDS: field.seconds(900),
  /** Live (unrevoked, unexpired) PATs one user may hold; creating one more is refused 422 PAT_LIMIT_REACHED. */
  PAT_MAX_LIVE_PER_USER: count(50),
  /**
   * Load balancers in front of the public pages whose X-Forwarded-For is believed; Express
   * `trust proxy` values. Not the facade: it signs the client address it decided on.
   */
  AUTH_TRUST_PROXY: field.list(),
  /** Lifetime of a developer-dashboard browser session. */
  DASHBOARD_SESSION_TTL_SECONDS: field.seconds(8 * 3600),
  /** Failed PAT logins allowed per client address, then 429 until the window ends. */
  PAT_LOGIN_MAX_FAILURES_PER_IP: count(20),
  /** Failed PAT logins allowed per token id (distributed guessing of one token's secret). */
  PAT_LOGIN_MAX_FAILURES_PER_TOKEN: count(10),
  /** Failed dashboard sign-ins allowed per (account, client address), and per client address. */
  SIGNIN_MAX_FAILURES_PER_ACCOUNT: count(5),
  SIGNIN_MAX_FAILURES_PER_IP: count(50),
  /** A password-reset link works once, for this long. */
  PASSWORD_RESET_TTL_SECONDS: field.seconds(1800),
  /**
   * Reset mails per (account, requesting address) per PASSWORD_RESET_ACCOUNT_WINDOW_SECONDS: someone
   * asking for another person's address spends only their own. Beyond: the same answer, no mail.
   */
  PASSWORD_RESET_MAX_PER_ACCOUNT_AND_ADDRESS: count(3),
  /** Reset mails per account per window over all requesting addresses (many addresses cannot flood one inbox). */
  PASSWORD_RESET_MAX_PER_ACCOUNT: count(10),
  /** The window both mail budgets count in. */
  PASSWORD_RESET_ACCOUNT_WINDOW_SECONDS: field.seconds(3600),
  /**
   * An account with no reset mail for this long gets one whatever the budgets say, so its owner
   * always receives a link within this time; at most PASSWORD_RESET_TTL_SECONDS.
   */
  PASSWORD_RESET_FLOOR_SECONDS: field.seconds(900),
  /** Reset requests and new-password posts per client address per minute. */
  PASSWORD_RESET_MAX_PER_ADDRESS_PER_MINUTE: count(10),
  /** PAT login attempts (the owners' login activity) are kept this many days. */
  LOGIN_ACTIVITY_RETENTION_DAYS: count(90),
  /** How often expired rows are purged (login attempts, delivered mail, unredeemed consents). */
  RETENTION_INTERVAL_MS: z.coerce.number().int().min(1000).default(3_600_000),
  /** The window every failure limit above counts in. */
  LOGIN_FAILURE_WINDOW_SECONDS: field.seconds(900),
  /** The one environment this deployment serves: only that environment's client ids, secrets and redirect URIs are accepted. */
  APP_ENV: field.appEnv(),
  /** {base_url}, the public API address (through the facade), for the authorization-server metadata. */
  AUTH_API_URL: field.url().default('http://localhost:8080/v1'),
  /**
   * DPoP (RFC 9449): every DPoP token request must carry the server's current nonce (answered
   * 400 use_dpop_nonce with a DPoP-Nonce header first). Nonces are stateless (an HMAC of a
   * 5-minute window under a key derived from SERVICE_KEY), so every auth instance accepts them.
   */
  DPOP_NONCE_REQUIRED: z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]).default(false),
  /** Lifetime of a pushed authorization request's request_uri (RFC 9126; single use): `expires_in` of POST /oauth/par. */
  OAUTH_PAR_TTL_SECONDS: z.coerce.number().int().min(1).max(600).default(60),
  /** Every app must push its authorization requests (RFC 9126 `require_pushed_authorization_requests`); per app: requirePushedAuthorizationRequests. */
  OAUTH_REQUIRE_PAR: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /** Lifetime of an authorization code (single use). */
  OAUTH_CODE_TTL_SECONDS: field.seconds(60),
  /** Lifetime of an OAuth access token: one hour. */
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: field.seconds(3600),
  /** Lifetime of a refresh token: 30 days. Each refresh issues a new one with a new full lifetime. */
  OAUTH_REFRESH_TOKEN_TTL_SECONDS: field.seconds(30 * 86400),
  /**
   * A spent refresh token presented again by its client within this many seconds of its use gets
   * the same new pair again, as long as that pair's refresh token is unused: a retry after a
   * timeout logs nobody out (longer than any timeout between a vendor and auth: the facade's proxy
   * waits 10 s). Later, or once the new refresh token was used, the whole grant is revoked (reuse
   * detection). 0: always revoke.
   */
  OAUTH_REFRESH_REUSE_GRACE_SECONDS: z.coerce.number().int().min(0).max(600).default(60),
  /**
   * Successful /oauth/token and /oauth/revoke calls per authenticated vendor app per minute:
   * a backend refreshing for many users from one address (100 per second by default).
   */
  OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT: count(6000),
  /**
   * Grants an instance keeps in memory (every refresh reads its grant). A trigger announces each
   * change at commit and every instance drops it; nothing is answered from memory while that is
   * not heard. 0 reads the database every time.
   */
  OAUTH_GRANT_CACHE_ENTRIES: z.coerce.number().int().min(0).max(10_000_000).default(50_000),
  /**
   * Clients (with their apps) an instance keeps in memory: every token request authenticates one.
   * Kept current the same way as the grants; 0 reads the database every time.
   */
  OAUTH_CLIENT_CACHE_ENTRIES: z.coerce.number().int().min(0).max(1_000_000).default(10_000),
  /**
   * DEV only: a private_key_jwt app's jwksUri may be on this machine (localhost, 127.0.0.0/8,
   * [::1]), for a vendor testing locally. Off, auth connects only to public addresses; private,
   * link-local and metadata addresses are refused even when on.
   */
  OAUTH_JWKS_URI_ALLOW_LOOPBACK: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /** Failed client authentications per client address, whichever client ids it tries (in LOGIN_FAILURE_WINDOW_SECONDS). */
  OAUTH_TOKEN_MAX_FAILURES_PER_IP: count(100),
  /** Failed client authentications per (client id, client address) (in LOGIN_FAILURE_WINDOW_SECONDS); never blocks the right secret. */
  OAUTH_CLIENT_MAX_FAILURES: count(20),
  /** SMTP server for outgoing mail (credentials to vendors), e.g. smtp://user:pass@host:587; unset: mail is written to MAIL_LOG_FILE. */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().default('Trading API <no-reply@trading-api.example>'),
  /** Development only (no SMTP_URL): a file of the user's own, never a shared temporary folder. */
  MAIL_LOG_FILE: z
    .string()
    .default(() => join(process.env['XDG_STATE_HOME'] || join(homedir(), '.local', 'state'), 'trading-api', 'mail.log')),
  /** The domains' internal listeners, for the back office in the admin API (accounts open/close, instruments). */
  ACCOUNTS_INTERNAL_URL: field.url().default('http://localhost:4101'),
  BANKING_INTERNAL_URL: field.url().default('http://localhost:4102'),
  OMS_INTERNAL_URL: field.url().default('http://localhost:4103'),
  /** How often the outbox is delivered (reset requests become links first); 0 turns the dispatcher off (tests deliver by hand). */
  MAIL_POLL_MS: z.coerce.number().int().min(0).default(2000),
  /** The settlement stream, where the OMS announces order changes and banking transfers' ends: auth turns them into webhooks. */
  EVENTS_STREAM: z.string().min(1).default('trading:oms:events'),
  /** How often due webhook deliveries are looked for (a new event wakes the sender sooner); 0: this instance sends none. */
  WEBHOOK_DISPATCH_POLL_MS: z.coerce.number().int().min(0).default(1000),
  /** How long a claimed batch of deliveries is one instance's: another takes it over after this if that instance died. */
  WEBHOOK_LEASE_MS: z.coerce.number().int().min(1000).max(3_600_000).default(120_000),
  /** The waits between a failed delivery's attempts, in seconds; after the last wait's attempt it is given up. */
  WEBHOOK_RETRY_SCHEDULE_SECONDS: z
    .string()
    .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?){0,19}$/, 'must be a comma-separated list of at most 20 numbers of seconds')
    .default('5,300,1800,7200,18000,36000,36000')
    .transform((v) => v.split(',').map(Number)),
  /** An endpoint whose every delivery failed for this long is turned off, and the app's business e-mail told. */
  WEBHOOK_DISABLE_AFTER_SECONDS: field.seconds(3 * 86400),
  /** How long a receiver has to answer one delivery. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(10_000),
});

export type AuthConfig = z.output<typeof authConfigSchema>;

export const loadAuthConfig = (env: NodeJS.ProcessEnv = process.env): AuthConfig => loadConfig('auth', authConfigSchema, env);

/** Settings with defaults added after the first release; callers that build the config object themselves (the platform) may leave them out. */
const dashboardSchema = authConfigSchema.pick({
  AUTH_KEY_ENCRYPTION_KEY: true,
  LOGIN_ACTIVITY_RETENTION_DAYS: true,
  RETENTION_INTERVAL_MS: true,
  AUTH_SIGNING_KEY_RELOAD_MS: true,
  AUTH_INTERNAL_PORT: true,
  AUTH_ADMIN_PORT: true,
  AUTH_ADMIN_HOST: true,
  AUTH_ADMIN_MAX_REQUESTS_PER_MINUTE: true,
  LISTEN_HOST: true,
  INTERNAL_LISTEN_HOST: true,
  DASHBOARD_SESSION_TTL_SECONDS: true,
  PAT_MAX_LIVE_PER_USER: true,
  PAT_LOGIN_MAX_FAILURES_PER_IP: true,
  PAT_LOGIN_MAX_FAILURES_PER_TOKEN: true,
  SIGNIN_MAX_FAILURES_PER_ACCOUNT: true,
  SIGNIN_MAX_FAILURES_PER_IP: true,
  PASSWORD_RESET_TTL_SECONDS: true,
  PASSWORD_RESET_MAX_PER_ACCOUNT_AND_ADDRESS: true,
  PASSWORD_RESET_MAX_PER_ACCOUNT: true,
  PASSWORD_RESET_ACCOUNT_WINDOW_SECONDS: true,
  PASSWORD_RESET_FLOOR_SECONDS: true,
  PASSWORD_RESET_MAX_PER_ADDRESS_PER_MINUTE: true,
  LOGIN_FAILURE_WINDOW_SECONDS: true,
  APP_ENV: true,
  AUTH_API_URL: true,
  DPOP_NONCE_REQUIRED: true,
  OAUTH_CODE_TTL_SECONDS: true,
  OAUTH_PAR_TTL_SECONDS: true,
  OAUTH_REQUIRE_PAR: true,
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: true,
  OAUTH_REFRESH_TOKEN_TTL_SECONDS: true,
  OAUTH_REFRESH_REUSE_GRACE_SECONDS: true,
  OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT: true,
  OAUTH_GRANT_CACHE_ENTRIES: true,
  OAUTH_CLIENT_CACHE_ENTRIES: true,
  OAUTH_TOKEN_MAX_FAILURES_PER_IP: true,
  OAUTH_CLIENT_MAX_FAILURES: true,
  OAUTH_JWKS_URI_ALLOW_LOOPBACK: true,
  SMTP_URL: true,
  MAIL_FROM: true,
  MAIL_LOG_FILE: true,
  ACCOUNTS_INTERNAL_URL: true,
  BANKING_INTERNAL_URL: true,
  OMS_INTERNAL_URL: true,
  MAIL_POLL_MS: true,
  EVENTS_STREAM: true,
  WEBHOOK_DISPATCH_POLL_MS: true,
  WEBHOOK_LEASE_MS: true,
  WEBHOOK_RETRY_SCHEDULE_SECONDS: true,
  WEBHOOK_DISABLE_AFTER_SECONDS: true,
  WEBHOOK_TIMEOUT_MS: true,
  OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE: true,
  API_RATE_LIMIT_NAMESPACE: true,
  SESSION_CACHE_ENTRIES: true,
});
export type DashboardSettings = z.output<typeof dashboardSchema>;
export const dashboardConfigDefaults = (): DashboardSettings => dashboardSchema.parse({});

/** What createAuthApp takes: a full config, except that the dashboard settings default. */
export type AuthAppConfig = Omit<AuthConfig, keyof DashboardSettings> & Partial<DashboardSettings>;
