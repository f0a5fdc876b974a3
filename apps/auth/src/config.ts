import { commonSchema, field, loadConfig, z } from '@trading/config';

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
});

export type AuthConfig = z.output<typeof authConfigSchema>;

export const loadAuthConfig = (env: NodeJS.ProcessEnv = process.env): AuthConfig => loadConfig('auth', authConfigSchema, env);
