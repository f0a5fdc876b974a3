import express, { Router, type RequestHandler, type Request, type Response } from 'express';
import { tightest, type FailureLimiter, type RefusalCounter } from '@trading/rate-limit';
import { requestContext, type SecurityLog } from '../security-log/security-log';
import { browserOf, type BrowserSessions } from '../web/browser-sessions';
import { csrfToken, verifyCsrf } from '../web/csrf';
import { knownLocale } from '../web/locale';
import { returnPath } from '../web/return-path';
import { dashboardPath } from '../web/signin.routes';
import { texts } from '../web/texts';
import type { Passkeys } from './passkey';
import { passkeyRoutes } from './passkey.routes';
import type { PendingSignIns } from './pending-sign-in';
import { recoveryCodesPage, removeRefusedPage, secondStepPage, setupPage, stepUpPage } from './second-factor.pages';
import type { SecondFactorStore } from './second-factor.store';
import { otpauthUri, qrCodeSvg } from './totp';

export interface SecondFactorDeps {
  factors: SecondFactorStore;
  pending: PendingSignIns;
  sessions: BrowserSessions;
  /** Wrong codes per (user, address) and per address, as for passwords. */
  limits: { perAccount: FailureLimiter; perIp: FailureLimiter };
  /** Each 429 counted as `second_factor`. */
  refusals: RefusalCounter;
  /** A sign-in finished with a code is recorded (and mailed from a new address) as a password sign-in is. */
  securityLog?: SecurityLog;
  /** Passkeys: a second factor, a sign-in without a password, and a step-up. */
  passkeys?: Passkeys;
}

type Checked = { ok: true } | { ok: false; blockedSeconds?: number };

const form = express.urlencoded({ extended: false, limit: '16kb' });
const codeOf = (req: Request) => {
  const code = (req.body as Record<string, unknown>)['code'];
  return typeof code === 'string' ? code.slice(0, 40) : '';
};

/**
 * A code for the user, counted like passwords: wrong ones per (user, address) and per address.
 * Someone guessing from elsewhere is stopped at their own address; the user, at theirs, is not.
 */
function codeChecker({ factors, limits, refusals }: SecondFactorDeps) {
  return async (req: Request, res: Response, userId: string, code: string): Promise<Checked> => {
    const ipKey = req.ip ?? 'unknown';
    const accountKey = `${userId}|${ipKey}`;
    const before = tightest([await limits.perAccount.state(accountKey), await limits.perIp.state(ipKey)]);
    if (before.blocked) {
      refusals.inc({ limit: 'second_factor' });
      res.setHeader('Retry-After', String(before.resetSeconds));
      return { ok: false, blockedSeconds: before.resetSeconds };
    }
    if (!(await factors.redeem(userId, code))) {
      await Promise.all([limits.perAccount.fail(accountKey), limits.perIp.fail(ipKey)]);
      return { ok: false };
    }
    await limits.perAccount.clear(accountKey);
    return { ok: true };
  };
}

/**
 * Sign-in's second step (`/<locale>/signin/second-factor`) and the dashboard's authenticator
 * app: set up (QR code, first code, recovery codes) and removal (with a code).
 */
export function secondFactorRoutes(deps: SecondFactorDeps): Router {
  const router = Router();
  const check = codeChecker(deps);
  signInStep(router, deps, check);
  dashboardSecurity(router, deps, check);
  if (deps.passkeys) router.use(passkeyRoutes({ ...deps, passkeys: deps.passkeys }));
  return router;
}

/** Only a browser holding a half-finished sign-in sees the step; a right code makes it a session. */
function signInStep(
  router: Router,
  { pending, sessions, securityLog, factors, passkeys }: SecondFactorDeps,
  check: ReturnType<typeof codeChecker>,
): void {
  /** Whether the second step offers the user's passkeys, and the code field (an authenticator app or recovery codes). */
  const offers = async (userId: string) => ({
    passkey: !!passkeys && (await factors.passkeys.count(userId)) > 0,
    code: (await factors.apps(userId)).length > 0 || (await factors.recoveryCodesLeft(userId)) > 0,
  });
  router.get('/:locale/signin/second-factor', knownLocale, async (req, res) => {
    const locale = req.params['locale'] as string;
    const signingIn = await pending.find(req);
    if (!signingIn) return res.redirect(303, `/${locale}/signin`);
    res.send(secondStepPage({ locale, csrf: csrfToken(req, res), ...(await offers(signingIn.userId)) }));
  });

  router.post('/:locale/signin/second-factor', knownLocale, form, verifyCsrf, async (req, res) => {
    const locale = req.params['locale'] as string;
    const t = texts(locale).secondFactor;
    const signingIn = await pending.find(req);
    if (!signingIn) return res.redirect(303, `/${locale}/signin`);
    const checked = await check(req, res, signingIn.userId, codeOf(req));
    if (!checked.ok) {
      const error = checked.blockedSeconds ? t.tooMany(Math.ceil(checked.blockedSeconds / 60)) : t.wrongCode;
      const page = secondStepPage({ locale, csrf: csrfToken(req, res), error, ...(await offers(signingIn.userId)) });
      return res.status(checked.blockedSeconds ? 429 : 401).send(page);
    }
    // The half-finished sign-in becomes one session, once.
    if (!(await pending.finish(req, res))) return res.redirect(303, `/${locale}/signin`);
    await sessions.start(req, res, { id: signingIn.userId, email: signingIn.email }, { otp: true });
    await securityLog?.recordAfter({ userId: signingIn.userId, type: 'sign_in', context: requestContext(req), detail: { factor: 'otp' } });
    res.redirect(303, signingIn.next ?? dashboardPath(locale));
  });
}

/**
 * The dashboard's authenticator app: set up, confirmed with a first code, removed with a code;
 * and a code given to confirm an action that needs a recent one (creating a READ_WRITE token).
 */
function dashboardSecurity(
  router: Router,
  { factors, sessions, securityLog }: SecondFactorDeps,
  check: ReturnType<typeof codeChecker>,
): void {
  const signedIn = (req: Request, res: Response, next: (err?: unknown) => void) => {
    if (browserOf(res)) return next();
    const locale = req.params['locale'] as string;
    res.redirect(303, `/${locale}/signin?next=${encodeURIComponent(dashboardPath(locale))}`);
  };
  const security = (locale: string) => `${dashboardPath(locale)}#security`;

  router.post('/:locale/developer/security/totp', knownLocale, signedIn, form, verifyCsrf, async (req, res) => {
    const locale = req.params['locale'] as string;
    const { userId } = browserOf(res)!.session;
    // One authenticator app at most (passkeys may be there besides).
    if (!(await factors.apps(userId)).length) await factors.begin(userId, texts(locale).secondFactor.defaultName);
    res.redirect(303, `/${locale}/developer/security/totp`);
  });

  router.get('/:locale/developer/security/totp', knownLocale, signedIn, async (req, res) => {
    const locale = req.params['locale'] as string;
    const { session } = browserOf(res)!;
    const setUp = await factors.pending(session.userId);
    if (!setUp) return res.redirect(303, security(locale));
    const qrSvg = await qrCodeSvg(otpauthUri(texts(locale).brand, session.email, setUp.secret));
    res.send(setupPage({ locale, user: { email: session.email, csrf: session.csrf }, secret: setUp.secret, qrSvg }));
  });

  router.post('/:locale/developer/security/totp/confirm', knownLocale, signedIn, form, verifyCsrf, async (req, res) => {
    const locale = req.params['locale'] as string;
    const { session } = browserOf(res)!;
    const user = { email: session.email, csrf: session.csrf };
    const codes = await factors.confirm(session.userId, codeOf(req));
    if (codes) {
      await securityLog?.recordAfter({
        userId: session.userId,
        type: 'factor_added',
        context: requestContext(req),
        detail: { factor: 'otp' },
      });
      return res.send(recoveryCodesPage({ locale, user, codes }));
    }
    const setUp = await factors.pending(session.userId);
    if (!setUp) return res.redirect(303, security(locale));
    const qrSvg = await qrCodeSvg(otpauthUri(texts(locale).brand, session.email, setUp.secret));
    res.status(400).send(setupPage({ locale, user, secret: setUp.secret, qrSvg, error: texts(locale).secondFactor.wrongFirstCode }));
  });

  stepUpRoutes(router, { factors, sessions }, check, signedIn);

  router.post('/:locale/developer/security/totp/:factorId/remove', knownLocale, signedIn, form, verifyCsrf, async (req, res) => {
    const locale = req.params['locale'] as string;
    const factorId = req.params['factorId'] as string;
    const { session } = browserOf(res)!;
    const t = texts(locale).secondFactor;
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(factorId)) return res.redirect(303, security(locale));
    // Whoever holds the session must also hold the phone (or a recovery code) to remove it.
    const checked = await check(req, res, session.userId, codeOf(req));
    if (!checked.ok) {
      const error = checked.blockedSeconds ? t.tooMany(Math.ceil(checked.blockedSeconds / 60)) : t.wrongCode;
      const user = { email: session.email, csrf: session.csrf };
      return res.status(checked.blockedSeconds ? 429 : 401).send(removeRefusedPage({ locale, user, factorId, error }));
    }
    if (await factors.remove(session.userId, factorId))
      await securityLog?.recordAfter({
        userId: session.userId,
        type: 'factor_removed',
        context: requestContext(req),
        detail: { factor: 'otp' },
      });
    res.redirect(303, security(locale));
  });
}

/** The confirm page: a code given there counts as the session's latest second factor (step-up). */
function stepUpRoutes(
  router: Router,
  { factors, sessions }: Pick<SecondFactorDeps, 'factors' | 'sessions'>,
  check: ReturnType<typeof codeChecker>,
  signedIn: RequestHandler,
): void {
  router.get('/:locale/developer/security/confirm', knownLocale, signedIn, async (req, res) => {
    const locale = req.params['locale'] as string;
    const { session } = browserOf(res)!;
    const next = returnPath(req.query['next']);
    if (!(await factors.enrolled(session.userId))) return res.redirect(303, next ?? dashboardPath(locale));
    res.send(stepUpPage({ locale, user: { email: session.email, csrf: session.csrf }, next }));
  });

  // A right code (counted by the same wrong-code limits as sign-in) is recorded on the session as its latest second factor.
  router.post('/:locale/developer/security/confirm', knownLocale, signedIn, form, verifyCsrf, async (req, res) => {
    const locale = req.params['locale'] as string;
    const { session } = browserOf(res)!;
    const t = texts(locale).secondFactor;
    // Where to go on (an app's authorization request that asked for a second factor), a path on this site only.
    const next = returnPath((req.body as Record<string, unknown>)['next']);
    if (!(await factors.enrolled(session.userId))) return res.redirect(303, next ?? dashboardPath(locale));
    const checked = await check(req, res, session.userId, codeOf(req));
    if (!checked.ok) {
      const error = checked.blockedSeconds ? t.tooMany(Math.ceil(checked.blockedSeconds / 60)) : t.wrongCode;
      const user = { email: session.email, csrf: session.csrf };
      return res.status(checked.blockedSeconds ? 429 : 401).send(stepUpPage({ locale, user, next, error }));
    }
    await sessions.confirmSecondFactor(res);
    res.redirect(303, next ?? `${dashboardPath(locale)}#create-token`);
  });
}
