import { RequestLimiter, type FailureLimiter, type RefusalCounter } from '@trading/rate-limit';
import type { Express, Router } from 'express';
import { dashboardRoutes } from '../dashboard/dashboard.routes';
import type { OAuthContext } from '../oauth/context';
import { loginRoutes } from '../oauth/login.routes';
import { PasswordResets } from '../password-reset/password-reset.service';
import { passwordResetRoutes } from '../password-reset/password-reset.routes';
import { ResetMailBudget } from '../password-reset/reset-mail-budget';
import { Passkeys, relyingPartyOf } from '../second-factor/passkey';
import { PendingSignIns } from '../second-factor/pending-sign-in';
import { secondFactorRoutes } from '../second-factor/second-factor.routes';
import { BrowserSessions } from '../web/browser-sessions';
import { homeRoutes } from '../web/home.routes';
import { pageRouter } from '../web/pages';
import { signInRoutes } from '../web/signin.routes';
import type { AuthServices } from './services';
import { withoutTrailingSlash } from './urls';

/** The browser's pages: home, sign-in, password reset, the OAuth login and consent, the dashboard. */
export function mountPages(services: AuthServices, app: Express, refusals: RefusalCounter, oauth: OAuthContext): void {
  const { config, logger, users, registry, sealed, pats, activity, grants, limiter, securityLog } = services;
  const sessions = new BrowserSessions(sealed, config.DASHBOARD_SESSION_TTL_SECONDS);
  const signInPerAccount = limiter('signin:account', config.SIGNIN_MAX_FAILURES_PER_ACCOUNT);
  const { secondFactors } = services;
  const pending = new PendingSignIns(sealed);
  const signIn = signInRoutes({
    users,
    sessions,
    limits: { perAccount: signInPerAccount, perIp: limiter('signin:ip', config.SIGNIN_MAX_FAILURES_PER_IP) },
    refusals,
    apps: { registry, environment: config.APP_ENV },
    secondFactor: { needed: (userId) => secondFactors.enrolled(userId), begin: (req, res, p) => pending.begin(req, res, p) },
    securityLog,
  });
  const passwordReset = passwordResetPages(services, sessions, signInPerAccount, refusals);
  app.use(
    pageRouter(sessions, logger, [
      homeRoutes(withoutTrailingSlash(config.AUTH_API_URL)),
      signIn,
      passwordReset,
      loginRoutes(oauth, {
        enrolled: (userId) => secondFactors.enrolled(userId),
        confirmPath: (locale, next) => `/${locale}/developer/security/confirm?next=${encodeURIComponent(next)}`,
      }),
      secondFactorRoutes({
        factors: secondFactors,
        pending,
        sessions,
        // Wrong codes count like wrong passwords, in counters of their own.
        limits: {
          perAccount: limiter('second-factor:account', config.SIGNIN_MAX_FAILURES_PER_ACCOUNT),
          perIp: limiter('second-factor:ip', config.SIGNIN_MAX_FAILURES_PER_IP),
        },
        refusals,
        securityLog,
        // Passkeys belong to auth's public address: its host is the RP ID, its origin the only one accepted.
        passkeys: new Passkeys(secondFactors.passkeys, sealed, relyingPartyOf(config.AUTH_ISSUER, 'Trading API')),
      }),
      dashboardRoutes({ pats, activity, grants, secondFactors, securityLog, flash: sealed, userAccounts: services.userAccounts }),
    ]),
  );
}

/** Password reset by e-mail: requests become links and mails out of band, in the mail dispatcher's passes. */
function passwordResetPages(
  { config, dataSource, store, namespace, mail, pats, grants, securityLog }: AuthServices,
  sessions: BrowserSessions,
  signInPerAccount: FailureLimiter,
  refusals: RefusalCounter,
): Router {
  const resets = new PasswordResets(
    dataSource,
    { ttlSeconds: config.PASSWORD_RESET_TTL_SECONDS, publicUrl: withoutTrailingSlash(config.AUTH_ISSUER) },
    () => mail.wake(),
    securityLog,
  );
  mail.addSource(() => resets.issuePending());
  return passwordResetRoutes({
    resets,
    sessions,
    credentials: { pats, grants },
    limits: {
      perAddress: new RequestLimiter(store, namespace, {
        name: 'password-reset:ip',
        perMinute: config.PASSWORD_RESET_MAX_PER_ADDRESS_PER_MINUTE,
      }),
      mails: new ResetMailBudget(store, namespace, {
        perAccountAndAddress: config.PASSWORD_RESET_MAX_PER_ACCOUNT_AND_ADDRESS,
        perAccount: config.PASSWORD_RESET_MAX_PER_ACCOUNT,
        windowSeconds: config.PASSWORD_RESET_ACCOUNT_WINDOW_SECONDS,
        floorSeconds: config.PASSWORD_RESET_FLOOR_SECONDS,
      }),
      signInPerAccount,
    },
    refusals,
  });
}
