import express, { Router, type Request, type Response } from 'express';
import { AppError } from '@trading/errors';
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
}

/** The developer dashboard (spec §5.2 step 1): create, list and revoke PATs, see their logins. */
export function dashboardRoutes({ pats, activity, grants }: DashboardDeps): Router {
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

  router.get('/:locale/developer', knownLocale, signedIn, async (req, res) => {
    const revoked = typeof req.query['revoked'] === 'string' ? req.query['revoked'] : undefined;
    const appRevoked = typeof req.query['app-revoked'] === 'string' ? req.query['app-revoked'] : undefined;
    const notice = revoked
      ? `Token ${revoked} is revoked. Sessions created from it have ended.`
      : appRevoked
        ? `Access for ${appRevoked} is revoked. Every token it held has stopped working.`
        : undefined;
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
    res.redirect(303, `/${req.params['locale'] as string}/developer?revoked=${encodeURIComponent(pat.id)}`);
  });
  router.post('/:locale/developer/apps/:grantId/revoke', knownLocale, signedIn, form, verifyCsrf, async (req, res) => {
    const userId = browserOf(res)!.session.userId;
    const grantId = req.params['grantId'] as string;
    const app = (await grants.listForUser(userId)).find((a) => a.grantId === grantId);
    await grants.revokeForUser(userId, grantId);
    res.redirect(303, `/${req.params['locale'] as string}/developer?app-revoked=${encodeURIComponent(app?.appName ?? 'the app')}`);
  });
  return router;
}
