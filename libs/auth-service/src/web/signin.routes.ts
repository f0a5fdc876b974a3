import express, { Router, type Request, type Response } from 'express';
import { tightest, type FailureLimiter, type RefusalCounter } from '@trading/rate-limit';
import { widenPolicy } from '@trading/service';
import type { Environment, RegistryService } from '../registry/registry.service';
import { requestContext, type SecurityLog } from '../security-log/security-log';
import { normaliseEmail, type UsersService } from '../users/users.service';
import { browserOf, type BrowserSessions } from './browser-sessions';
import { csrfToken, verifyCsrf } from './csrf';
import { knownLocale, DEFAULT_LOCALE } from './locale';
import { returnPath } from './return-path';
import { safeLogoUrl, signInPage, type SigningInApp } from './signin.page';
import { texts } from './texts';

export interface SignInDeps {
  users: UsersService;
  sessions: BrowserSessions;
  limits: { perAccount: FailureLimiter; perIp: FailureLimiter };
  /** Each 429 counted as `sign_in`. */
  refusals: RefusalCounter;
  /** To name the app an OAuth sign-in continues to (`next` is its authorization request). */
  apps?: { registry: RegistryService; environment: Environment };
  /** Users with a second factor: a right password leads to its step, not to a session. */
  secondFactor?: {
    needed(userId: string): Promise<boolean>;
    begin(req: Request, res: Response, pending: { userId: string; email: string; next?: string }): Promise<void>;
  };
  /** Each password sign-in is recorded; one from an address new to the account is mailed. */
  securityLog?: SecurityLog;
}

/** `next` = `/<locale>/login?client_id=…`: the app of that request, if it is registered and active here. */
async function appOf(next: string | undefined, apps: SignInDeps['apps']): Promise<SigningInApp | undefined> {
  if (!next || !apps) return undefined;
  const url = new URL(next, 'http://this.site');
  const clientId = url.searchParams.get('client_id');
  if (!/^\/[a-z]{2}\/login$/.test(url.pathname) || !clientId || clientId.length > 200) return undefined;
  const client = await apps.registry.findClient(clientId, apps.environment);
  if (!client) return undefined;
  return { name: client.app.appName, company: client.app.companyName, logoUrl: client.app.logoUrl || undefined };
}

/** The page's policy lets the app's logo load from its own origin (and nothing else). */
function allowLogo(res: import('express').Response, app: SigningInApp | undefined) {
  const logo = safeLogoUrl(app?.logoUrl);
  if (logo) widenPolicy(res, { 'img-src': [new URL(logo).origin] });
}

/** `/<locale>/signin?…&again=1`: show the form though the browser is signed in (a fresh sign-in is needed). */
export const SIGN_IN_AGAIN = 'again';

/** Where a signed-in user lands by default. */
export const dashboardPath = (locale: string) => `/${locale}/developer`;

/** GET/POST /<locale>/signin and POST /<locale>/signout. */
export function signInRoutes({ users, sessions, limits, refusals, apps, secondFactor, securityLog }: SignInDeps): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '16kb' });

  router.get('/:locale/signin', knownLocale, async (req, res) => {
    const locale = req.params['locale'] as string;
    const next = returnPath(req.query['next']);
    // An app that needs a fresh sign-in (OpenID Connect prompt=login, max_age) gets the form even for a signed-in browser.
    const again = req.query[SIGN_IN_AGAIN] === '1';
    if (browserOf(res) && !again) return res.redirect(303, next ?? dashboardPath(locale));
    const app = await appOf(next, apps);
    allowLogo(res, app);
    // The text of the notice is the server's; the URL only says which one.
    const notice =
      req.query['reset'] === 'done'
        ? texts(locale).signIn.passwordChanged
        : again && browserOf(res)
          ? texts(locale).signIn.signInAgain
          : undefined;
    res.send(signInPage({ locale, csrf: csrfToken(req, res), next, app, notice }));
  });

  router.post('/:locale/signin', knownLocale, form, verifyCsrf, async (req, res) => {
    const locale = req.params['locale'] as string;
    const body = req.body as Record<string, unknown>;
    const email = typeof body['email'] === 'string' ? body['email'].slice(0, 320) : '';
    const password = typeof body['password'] === 'string' ? body['password'].slice(0, 200) : '';
    const next = returnPath(body['next']);
    const t = texts(locale);
    const app = await appOf(next, apps);
    const again = (status: number, error: string) => {
      allowLogo(res, app);
      return res.status(status).send(signInPage({ locale, csrf: csrfToken(req, res), email, next, error, app }));
    };
    if (!email.trim() || !password) return again(400, t.enterBoth);

    // Failures count per (account, address) — whether the account exists or not, so this tells
    // nothing — and per address. A stranger's guesses lock the account at the stranger's address
    // only: its owner, signing in from anywhere else, never notices.
    const ipKey = req.ip ?? 'unknown';
    const accountKey = `${normaliseEmail(email)}|${ipKey}`;
    const before = tightest([await limits.perAccount.state(accountKey), await limits.perIp.state(ipKey)]);
    if (before.blocked) {
      refusals.inc({ limit: 'sign_in' });
      res.setHeader('Retry-After', String(before.resetSeconds));
      return again(429, t.tooMany(Math.ceil(before.resetSeconds / 60)));
    }
    const user = await users.verifyPassword(email, password);
    if (!user) {
      await Promise.all([limits.perAccount.fail(accountKey), limits.perIp.fail(ipKey)]);
      return again(401, t.wrongPassword);
    }
    await limits.perAccount.clear(accountKey);
    if (secondFactor && (await secondFactor.needed(user.id))) {
      // No session yet: the browser only holds a short-lived half-finished sign-in.
      await secondFactor.begin(req, res, { userId: user.id, email: user.email, next });
      return res.redirect(303, `/${locale}/signin/second-factor`);
    }
    await sessions.start(req, res, user);
    await securityLog?.recordAfter({ userId: user.id, type: 'sign_in', context: requestContext(req) });
    res.redirect(303, next ?? dashboardPath(locale));
  });

  router.post('/:locale/signout', knownLocale, form, verifyCsrf, async (req, res) => {
    await sessions.end(req, res);
    res.redirect(303, `/${req.params['locale'] ?? DEFAULT_LOCALE}/signin`);
  });
  return router;
}
