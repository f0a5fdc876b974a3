import type { DataSource } from 'typeorm';
import { purgeSecurityEvents } from './security-log/security-log';

/** How long auth keeps what it no longer needs. */
export interface RetentionSettings {
  /** PAT login attempts (the owners' login activity). */
  loginAttemptDays: number;
}

/**
 * Deletes what has outlived its use, so no table grows without bound: login attempts past their
 * retention, delivered mail after 30 days, password-reset links a day after they expired, and
 * consents whose code was never redeemed (a pending grant is only good for the code's lifetime) after a day,
 * security-log events after 90 days, and webhook events (with their deliveries and attempts) 30 days
 * after none of their deliveries is waiting any more: the delivery log shows a month.
 */
export async function purgeExpired(dataSource: DataSource, settings: RetentionSettings): Promise<Record<string, number>> {
  const count = (result: unknown) => (Array.isArray(result) ? Number(result[1] ?? 0) : 0);
  return {
    loginAttempts: count(
      await dataSource.query('DELETE FROM pat_login_attempts WHERE at < now() - make_interval(days => $1)', [settings.loginAttemptDays]),
    ),
    sentMail: count(await dataSource.query("DELETE FROM email_outbox WHERE sent_at IS NOT NULL AND sent_at < now() - interval '30 days'")),
    passwordResetLinks: count(await dataSource.query("DELETE FROM password_reset_tokens WHERE expires_at < now() - interval '1 day'")),
    unredeemedConsents: count(
      await dataSource.query("DELETE FROM oauth_grants WHERE activated_at IS NULL AND created_at < now() - interval '1 day'"),
    ),
    securityEvents: count(await purgeSecurityEvents(dataSource)),
    webhookEvents: count(
      await dataSource.query(
        `DELETE FROM webhook_events ev WHERE ev.created_at < now() - interval '30 days'
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id AND d.status = 'PENDING')`,
      ),
    ),
  };
}
