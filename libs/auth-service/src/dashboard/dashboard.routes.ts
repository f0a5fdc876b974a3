import { createHash } from 'node:crypto';
import express, { Router, type Request, type Response } from 'express';
import { AppError } from '@trading/errors';
import type { KeyValueStore } from '@trading/redis';
import type { GrantService } from '../oauth/grants';
import type { LoginActivityService } from '../pat/login-activity.service';
import type { PatService } from '../pat/pat.service';
import { browserOf, type BrowserSession } from '../web/browser-sessions';
import { verifyCsrf } from '../web/csrf';
import { knownLocale } from '../web/locale';
import { dashboardPage, type DashboardView } from './dashboard.page';
import { readTokenForm, toNewPat, TOKEN_FIELDS, type TokenField } from './token-form';

export interface DashboardDeps {
  pats: PatService;
  activity: LoginActivityService;
  grants: GrantService;
  /** Where a notice waits for the GET that follows a form's redirect (sealed: only auth writes one). */
  flash: KeyValueStore;
}

/** What a notice says, decided here: the URL never supplies its text. */
type Flash = { kind: 'token-revoked'; tokenId: string } | { kind: 'app-revoked'; appName: string };
const FLASH_TTL_SECONDS = 60;
/** One pending notice per browser session, under a hash of the session id (Redis never holds a usable cookie). */
const flashKey = (sessionId: string) => `dashboard-flash:${createHash('sha256').update(sessionId).digest('base64url')}`;
const noticeOf = (flash: Flash) =>
  flash.kind === 'token-revoked'
    ? `Token ${flash.tokenId} is revoked. Sessions created from it have ended.`
    : `Access for ${flash.appName} is revoked. Every token it held has stopped working.`;

/** The developer dashboard (spec §5.2 step 1): create, list and revoke PATs, see their logins. */
export function dashboardRoutes({ pats, activity, grants, flash }: DashboardDeps): Router {
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
      activity: logins,
      ...extra,
    };
    res.status(status).send(dashboardPage(view));
  }

  /** Post/redirect/get: the POST leaves its notice here, the next dashboard GET shows it once. */
  const leaveNotice = (res: Response, notice: Flash) => flash.set(flashKey(browserOf(res)!.id), JSON.stringify(notice), FLASH_TTL_SECONDS);
  async function takeNotice(res: Response): Promise<string | undefined> {
    const key = flashKey(browserOf(res)!.id);
    const raw = await flash.get(key);
    if (!raw) return undefined;
    await flash.del(key);
    return noticeOf(JSON.parse(raw) as Flash);
  }

  router.get('/:locale/developer', knownLocale, signedIn, async (req, res) => {
    const notice = await takeNotice(res);
    await render(req, res, browserOf(res)!.session, notice ? { notice } : {});
  });

  router.post('/:locale/developer/tokens', knownLocale, signedIn, form, verifyCsrf, async (req, res) => {
    const session = browserOf(res)!.session;
    const values = readTokenForm(req.body as Record<string, unknown>);
    try {
      const { token, pat } = await pats.create(toNewPat(session.userId, values));
      // Rendered in the answer to the POST itself: the token is never stored anywhere to show later.
      await render(req, res, session, { created: { token, name: pat.name } }, 201);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      const field = TOKEN_FIELDS.includes(err.field as TokenField) ? (err.field as TokenField) : 'form';
      await render(req, res, session, { form: values, errors: { [field]: err.message } }, err.status);
    }
  });

  // The address bar shows /developer/tokens after creating one; opening it again lands on the dashboard.
  router.get('/:locale/developer/tokens', knownLocale, (req, res) => res.redirect(303, `/${req.params['locale'] as string}/developer`));

  router.post('/:locale/developer/tokens/:tokenId/revoke', knownLocale, signedIn, form, verifyCsrf, async (req, res) => {
    const pat = await pats.revoke(browserOf(res)!.session.userId, req.params['tokenId']);
    await leaveNotice(res, { kind: 'token-revoked', tokenId: pat.id });
    res.redirect(303, `/${req.params['locale'] as string}/developer`);
  });
  router.post('/:locale/developer/apps/:grantId/revoke', knownLocale, signedIn, form, verifyCsrf, async (req, res) => {
    const userId = browserOf(res)!.session.userId;
    const grantId = req.params['grantId'] as string;
    const app = (await grants.listForUser(userId)).find((a) => a.grantId === grantId);
    await grants.revokeForUser(userId, grantId);
    await leaveNotice(res, { kind: 'app-revoked', appName: app?.appName ?? 'the app' });
    res.redirect(303, `/${req.params['locale'] as string}/developer`);
  });
  return router;
}
