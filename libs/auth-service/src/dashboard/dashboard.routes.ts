import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import { AppError } from '@trading/errors';
import type { KeyValueStore } from '@trading/redis';
import type { GrantService } from '../oauth/grants';
import type { LoginActivityService } from '../pat/login-activity.service';
import type { PatService } from '../pat/pat.service';
import { securitySection, stepUpForm } from '../second-factor/second-factor.pages';
import type { SecondFactorStore } from '../second-factor/second-factor.store';
import { requestContext, type SecurityLog } from '../security-log/security-log';
import { chosenAccounts, type UserAccounts } from '../users/user-accounts';
import { html } from '../web/html';
import { browserOf, recentSecondFactor, type BrowserSession } from '../web/browser-sessions';
import { verifyCsrf } from '../web/csrf';
import { knownLocale } from '../web/locale';
import { texts, type Texts } from '../web/texts';
import { dashboardPage, type DashboardView } from './dashboard.page';
import { checkTokenForm, readTokenForm, toNewPat, TOKEN_FIELDS, type TokenField } from './token-form';

export interface DashboardDeps {
  pats: PatService;
  activity: LoginActivityService;
  grants: GrantService;
  /** The user's authenticator app, shown in the "Security" section. */
  secondFactors: SecondFactorStore;
  /** The user's security log: listed on the page; disconnecting an app is recorded in it. */
  securityLog: SecurityLog;
  /** Where a notice waits for the GET that follows a form's redirect (sealed: only auth writes one). */
  flash: KeyValueStore;
  /** The user's accounts, offered to limit a new token or a connected app to some of them. */
  userAccounts: UserAccounts;
}

/** What a notice says, decided here: the URL never supplies its text. */
type Flash =
  | { kind: 'token-revoked'; tokenId: string }
  | { kind: 'app-revoked'; appName?: string }
  | { kind: 'app-accounts'; appName?: string }
  | { kind: 'app-accounts-none' }
  /** Post/redirect/get after creating a token: `sealed` is the token, encrypted under the session cookie (see `lock`). */
  | { kind: 'token-created'; name: string; sealed: string };
const FLASH_TTL_SECONDS = 60;
/** One pending notice per browser session, under a hash of the session id (Redis never holds a usable cookie). */
const flashKey = (sessionId: string) => `dashboard-flash:${createHash('sha256').update(sessionId).digest('base64url')}`;

/** What a notice other than a new token says, in the page's language. */
function noticeText(notice: Exclude<Flash, { kind: 'token-created' }>, x: Texts['dashboard']): string {
  switch (notice.kind) {
    case 'token-revoked':
      return x.tokenRevoked(notice.tokenId);
    case 'app-revoked':
      return x.appRevoked(notice.appName ?? x.theApp);
    case 'app-accounts':
      return x.accountsSaved(notice.appName ?? x.theApp);
    case 'app-accounts-none':
      return x.accountsNoneTicked;
  }
}

/**
 * A new token waits for the GET after the form's redirect in Redis for at most a minute, so it
 * is encrypted (AES-256-GCM) under a key derived from the browser's session cookie, which Redis
 * never sees (its keys are a different hash of it): only that browser's next request can read it.
 */
const flashCipherKey = (sessionId: string) => createHash('sha256').update('dashboard-flash-token\n').update(sessionId).digest();
function lock(sessionId: string, token: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', flashCipherKey(sessionId), iv);
  const data = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), data].map((b) => b.toString('base64url')).join('.');
}
function unlock(sessionId: string, sealed: string): string | undefined {
  try {
    const [iv, tag, data] = sealed.split('.').map((p) => Buffer.from(p, 'base64url'));
    const decipher = createDecipheriv('aes-256-gcm', flashCipherKey(sessionId), iv!);
    decipher.setAuthTag(tag!);
    return Buffer.concat([decipher.update(data!), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * The "Security" section; and above the token form, while a READ_WRITE token would need a code
 * first (a second factor set up, none given in this session in the last ten minutes), why and the form that gives one.
 */
async function securityView(
  factors: SecondFactorStore,
  locale: string,
  session: BrowserSession,
): Promise<Pick<DashboardView, 'security' | 'stepUp'>> {
  const list = await factors.list(session.userId);
  const recoveryLeft = await factors.recoveryCodesLeft(session.userId);
  const security = securitySection({ locale, csrf: session.csrf, factors: list, recoveryLeft });
  if (!list.length || recentSecondFactor(session)) return { security };
  const why = texts(locale).secondFactor.stepUpNeeded;
  return {
    security,
    stepUp: html`<div id="step-up"><p class="hint" id="step-up-needed">${why}</p>${stepUpForm(locale, session.csrf)}</div>`,
  };
}

/** The developer dashboard, where a user manages their own PATs: create, list and revoke PATs, see their logins. */
export function dashboardRoutes({ pats, activity, grants, secondFactors, securityLog, flash, userAccounts }: DashboardDeps): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '16kb' });

  /** Signed-out visitors go to the sign-in page and come back here afterwards. */
  const signedIn = (req: Request, res: Response, next: (err?: unknown) => void) => {
    if (browserOf(res)) return next();
    const locale = req.params['locale'] as string;
    res.redirect(303, `/${locale}/signin?next=${encodeURIComponent(`/${locale}/developer`)}`);
  };

  async function render(req: Request, res: Response, session: BrowserSession, extra: Partial<DashboardView> = {}, status = 200) {
    const locale = req.params['locale'] as string;
    const cursor = typeof req.query['activity'] === 'string' ? req.query['activity'] : undefined;
    const logins = await activity.list(session.userId, { cursor }).catch((err: unknown) => {
      // A stale or edited link shows the newest page rather than an error page.
      if (err instanceof AppError && err.field === 'cursor') return activity.list(session.userId, {});
      throw err;
    });
    const view: DashboardView = {
      locale,
      user: { email: session.email, csrf: session.csrf },
      tokens: await pats.listForUser(session.userId),
      apps: await grants.listForUser(session.userId),
      // Without the accounts service the page still shows; only the choice of accounts is missing.
      accounts: await userAccounts.choosable(session.userId).catch(() => undefined),
      ...(await securityView(secondFactors, locale, session)),
      activity: logins,
      securityLog: await securityLog.listForUser(session.userId),
      ...extra,
    };
    res.status(status).send(dashboardPage(view));
  }

  /** Post/redirect/get: the POST leaves its notice here, the next dashboard GET shows it once. */
  const leaveNotice = (res: Response, notice: Flash) => flash.set(flashKey(browserOf(res)!.id), JSON.stringify(notice), FLASH_TTL_SECONDS);
  /** Read once: deleting is what claims it, so two tabs reloading at once cannot both show a new token. */
  async function takeNotice(req: Request, res: Response): Promise<Partial<DashboardView>> {
    const { id } = browserOf(res)!;
    const key = flashKey(id);
    const raw = await flash.get(key);
    if (!raw || (await flash.del(key)) !== 1) return {};
    const x = texts(req.params['locale'] as string).dashboard;
    const notice = JSON.parse(raw) as Flash;
    if (notice.kind === 'token-created') {
      const token = unlock(id, notice.sealed);
      return token ? { created: { token, name: notice.name } } : {};
    }
    return { notice: noticeText(notice, x) };
  }

  router.get('/:locale/developer', knownLocale, signedIn, async (req, res) => {
    await render(req, res, browserOf(res)!.session, await takeNotice(req, res));
  });

  router.post('/:locale/developer/tokens', knownLocale, signedIn, form, verifyCsrf, async (req, res) => {
    const { id, session } = browserOf(res)!;
    const locale = req.params['locale'] as string;
    const x = texts(locale).dashboard;
    const values = readTokenForm(req.body as Record<string, unknown>);
    const refused = checkTokenForm(values, x);
    if (Object.keys(refused).length) return render(req, res, session, { form: values, errors: refused }, 400);
    // A user with a second factor creates a READ_WRITE token only with one given in this session within the last ten minutes.
    if (values.scope === 'READ_WRITE' && !recentSecondFactor(session) && (await secondFactors.enrolled(session.userId)))
      return render(req, res, session, { form: values, errors: { scope: texts(locale).secondFactor.stepUpNeeded } }, 403);
    try {
      const { token, pat } = await pats.create({ ...toNewPat(session.userId, values), context: requestContext(req) });
      // Post/redirect/get: the token waits (encrypted, a minute at most) for the GET that follows,
      // which shows it once; a reload of that page neither resubmits nor shows it again.
      await leaveNotice(res, { kind: 'token-created', name: pat.name, sealed: lock(id, token) });
      res.redirect(303, `/${locale}/developer`);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      // The rules above already passed: what is left is the token limit, or a date that changed at midnight.
      const field = TOKEN_FIELDS.includes(err.field as TokenField) ? (err.field as TokenField) : 'form';
      const message =
        err.code === 'PAT_LIMIT_REACHED'
          ? x.tooManyTokens(Number(err.options.details?.['limit'] ?? 0))
          : field === 'accounts'
            ? x.accountsUnknown
            : x.refused;
      await render(req, res, session, { form: values, errors: { [field]: message } }, err.status);
    }
  });

  // The address bar shows /developer/tokens after creating one; opening it again lands on the dashboard.
  router.get('/:locale/developer/tokens', knownLocale, (req, res) => res.redirect(303, `/${req.params['locale'] as string}/developer`));

  router.post('/:locale/developer/tokens/:tokenId/revoke', knownLocale, signedIn, form, verifyCsrf, async (req, res) => {
    const pat = await pats.revoke(browserOf(res)!.session.userId, req.params['tokenId'], new Date(), requestContext(req));
    await leaveNotice(res, { kind: 'token-revoked', tokenId: pat.id });
    res.redirect(303, `/${req.params['locale'] as string}/developer`);
  });
  connectedAppRoutes(router, { grants, securityLog, userAccounts }, form, signedIn, leaveNotice);
  return router;
}

/** The connected apps' buttons: disconnect one, or change the accounts it reaches. */
function connectedAppRoutes(
  router: Router,
  { grants, securityLog, userAccounts }: Pick<DashboardDeps, 'grants' | 'securityLog' | 'userAccounts'>,
  form: RequestHandler,
  signedIn: RequestHandler,
  leaveNotice: (res: Response, notice: Flash) => Promise<void>,
): void {
  router.post('/:locale/developer/apps/:grantId/revoke', knownLocale, signedIn, form, verifyCsrf, async (req, res) => {
    const appName = await disconnectApp({ grants, securityLog }, req, browserOf(res)!.session.userId, req.params['grantId'] as string);
    await leaveNotice(res, { kind: 'app-revoked', appName });
    res.redirect(303, `/${req.params['locale'] as string}/developer`);
  });
  // The connected-apps page's account choice: the app reaches the accounts ticked from its next request on.
  router.post('/:locale/developer/apps/:grantId/accounts', knownLocale, signedIn, form, verifyCsrf, async (req, res) => {
    const { userId } = browserOf(res)!.session;
    const grantId = req.params['grantId'] as string;
    const accountIds = chosenAccounts((req.body as Record<string, unknown>)['accounts'], await userAccounts.choosable(userId));
    if (!accountIds.length) {
      await leaveNotice(res, { kind: 'app-accounts-none' });
    } else {
      await grants.setAccountsForUser(userId, grantId, accountIds);
      const app = await securityLog.appOfGrant(grantId);
      const detail = { accounts: String(accountIds.length) };
      await securityLog.recordAfter({ userId, type: 'app_accounts_changed', context: requestContext(req), app, detail });
      await leaveNotice(res, { kind: 'app-accounts', appName: app?.name });
    }
    res.redirect(303, `/${req.params['locale'] as string}/developer#authorised-apps`);
  });
}

/**
 * The dashboard's revoke button for an app: every grant of the user to it ends, then the security
 * log records it. Returns the app's name, for the notice.
 */
async function disconnectApp(
  { grants, securityLog }: Pick<DashboardDeps, 'grants' | 'securityLog'>,
  req: Request,
  userId: string,
  grantId: string,
): Promise<string | undefined> {
  // Refused (not found) unless the grant is the user's; only then is its app looked up.
  await grants.revokeForUser(userId, grantId);
  const app = await securityLog.appOfGrant(grantId);
  await securityLog.recordAfter({ userId, type: 'app_disconnected', context: requestContext(req), app });
  return app?.name;
}
