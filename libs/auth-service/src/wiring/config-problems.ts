import type { AuthConfig } from '../config';

/** Settings that are each valid but do not go together, or not in this environment. */
export function configProblems(config: AuthConfig): string[] {
  // Vendors' client secrets must reach them by mail; outside DEV a local file will not do.
  return [
    ...(config.APP_ENV !== 'DEV' && !config.SMTP_URL
      ? [`SMTP_URL: is required when APP_ENV is ${config.APP_ENV} (client secrets are delivered by e-mail)`]
      : []),
    ...(config.APP_ENV !== 'DEV' && !config.AUTH_KEY_ENCRYPTION_KEY
      ? [`AUTH_KEY_ENCRYPTION_KEY: is required when APP_ENV is ${config.APP_ENV} (it encrypts the signing keys at rest)`]
      : []),
    // The floor promises the owner a live link: the last mail's link must outlive the wait for the next.
    ...(config.PASSWORD_RESET_FLOOR_SECONDS > config.PASSWORD_RESET_TTL_SECONDS
      ? [
          `PASSWORD_RESET_FLOOR_SECONDS: must be at most PASSWORD_RESET_TTL_SECONDS (${config.PASSWORD_RESET_TTL_SECONDS}), or an owner could be left with no live link`,
        ]
      : []),
    // Fetching a jwks_uri on this machine is for a vendor's local tests only.
    ...(config.APP_ENV !== 'DEV' && config.OAUTH_JWKS_URI_ALLOW_LOOPBACK
      ? [`OAUTH_JWKS_URI_ALLOW_LOOPBACK: may be true only when APP_ENV is DEV, not ${config.APP_ENV}`]
      : []),
  ];
}
