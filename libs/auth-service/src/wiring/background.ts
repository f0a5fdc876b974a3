import { startPeriodic } from '@trading/service';
import { purgeExpired } from '../retention';
import type { AuthServices } from './services';

/** The mail dispatcher's passes and the retention purge, each stopped on close. */
export function startBackgroundWork({ config, logger, life, dataSource, mail }: AuthServices): void {
  mail.start(config.MAIL_POLL_MS);
  life.defer('mail dispatcher', () => mail.stop());
  const retention = startPeriodic(
    'retention',
    config.RETENTION_INTERVAL_MS,
    () => purgeExpired(dataSource, { loginAttemptDays: config.LOGIN_ACTIVITY_RETENTION_DAYS }),
    logger,
  );
  life.defer('retention', () => retention.stop());
}
