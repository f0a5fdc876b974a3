import { openDatabase, type DataSource } from '@trading/db';
import type { AuthConfig } from '../config';
import { SigningKeyEntity } from '../keys/signing-key.entity';
import { Initial1732230000000 } from '../migrations/1732230000000-initial';
import { PatLoginAttempts1732400000000 } from '../migrations/1732400000000-pat-login-attempts';
import { OAuth1732500000000 } from '../migrations/1732500000000-oauth';
import { GrantConsent1732600000000 } from '../migrations/1732600000000-grant-consent';
import { WebOrigins1732700000000 } from '../migrations/1732700000000-web-origins';
import { ClientPolicy1732800000000 } from '../migrations/1732800000000-client-policy';
import { PasswordReset1733000000000 } from '../migrations/1733000000000-password-reset';
import { GrantsChanged1733100000000 } from '../migrations/1733100000000-grants-changed';
import { ClientsChanged1733200000000 } from '../migrations/1733200000000-clients-changed';
import { PasswordResetRequests1733340000000 } from '../migrations/1733340000000-password-reset-requests';
import { DpopNonce1733400000000 } from '../migrations/1733400000000-dpop-nonce';
import { SecurityEvents1733500000000 } from '../migrations/1733500000000-security-events';
import { SecondFactors1733600000000 } from '../migrations/1733600000000-second-factors';
import { ChosenAccounts1733650000000 } from '../migrations/1733650000000-chosen-accounts';
import { RequireSecondFactor1733660000000 } from '../migrations/1733660000000-require-second-factor';
import { Passkeys1733700000000 } from '../migrations/1733700000000-passkeys';
import { Webhooks1733800000000 } from '../migrations/1733800000000-webhooks';
import { PatLoginAttemptEntity } from '../pat/login-attempt.entity';
import { PersonalAccessTokenEntity } from '../pat/pat.entity';
import { UserEntity } from '../users/user.entity';

/** Auth's database, migrated to this version's schema. */
export function openAuthDatabase(config: AuthConfig): Promise<DataSource> {
  return openDatabase({
    url: config.AUTH_DATABASE_URL,
    entities: [UserEntity, PersonalAccessTokenEntity, SigningKeyEntity, PatLoginAttemptEntity],
    migrations: [
      Initial1732230000000,
      PatLoginAttempts1732400000000,
      OAuth1732500000000,
      GrantConsent1732600000000,
      WebOrigins1732700000000,
      ClientPolicy1732800000000,
      PasswordReset1733000000000,
      GrantsChanged1733100000000,
      ClientsChanged1733200000000,
      PasswordResetRequests1733340000000,
      DpopNonce1733400000000,
      SecurityEvents1733500000000,
      SecondFactors1733600000000,
      ChosenAccounts1733650000000,
      RequireSecondFactor1733660000000,
      Passkeys1733700000000,
      Webhooks1733800000000,
    ],
    limits: config.DB_STATEMENT_TIMEOUT_MS === undefined ? undefined : { statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS },
  });
}
