import type { RefusalCounter } from '@trading/rate-limit';
import { baseApp } from '@trading/service';
import { Router, type Express } from 'express';
import { adminRoutes } from '../admin/admin.routes';
import { adminAudit } from '../admin/audit';
import { adminCredential } from '../admin/credential';
import { adminRateLimit } from '../admin/rate-limit';
import { backOfficeRoutes } from '../back-office/back-office.routes';
import type { AuthServices } from './services';

/** The service team's API: its own listener (loopback by default), limited and audited. */
export function adminApp(
  { config, logger, store, namespace, users, pats, registry, signer, backOffice }: AuthServices,
  refusals: RefusalCounter,
  /** More admin routes of auth's features (webhooks), behind the same credential, limit and audit. */
  more: Router[] = [],
): Express {
  const admin = baseApp({ name: 'auth-admin', logger }, 'admin');
  const isAdmin = adminCredential(config.AUTH_ADMIN_TOKEN);
  // Audit first, so calls the limit refuses are on record too.
  admin.use(
    adminAudit(config.AUTH_ADMIN_TOKEN, logger, isAdmin),
    adminRateLimit(store, namespace, config.AUTH_ADMIN_MAX_REQUESTS_PER_MINUTE, refusals, isAdmin),
    adminRoutes(config.AUTH_ADMIN_TOKEN, users, pats, registry, signer, Router().use(backOfficeRoutes(users, backOffice), ...more)),
  );
  return admin;
}
