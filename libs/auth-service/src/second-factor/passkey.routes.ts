import express, { Router, type Request, type Response } from 'express';
import type { FailureLimiter, RefusalCounter } from '@trading/rate-limit';
import { requestContext, type SecurityLog } from '../security-log/security-log';
import { browserOf, recentSecondFactor, type BrowserSessions } from '../web/browser-sessions';
import { verifyCsrf } from '../web/csrf';
import { knownLocale } from '../web/locale';
import { returnPath } from '../web/return-path';
import { dashboardPath } from '../web/signin.routes';
import { texts } from '../web/texts';
import type { Passkeys } from './passkey';
import { MAX_PASSKEY_NAME } from './passkey.store';
import { passkeyNamePage } from './second-factor.pages';
import type { PendingSignIns } from './pending-sign-in';
import type { SecondFactorStore } from './second-factor.store';

export interface PasskeyDeps {
  passkeys: Passkeys;
  factors: SecondFactorStore;
  pending: PendingSignIns;
  sessions: BrowserSessions;
  securityLog?: SecurityLog;
  /**
   * Refused sign-in assertions count per address, in the wrong codes' counter: an address that
   * has spent it is answered 429 before another is checked. Someone forging answers elsewhere
   * never stops the user at their own address.
   */
  limits?: { perIp: FailureLimiter };
  /** Each 429 counted as `second_factor`. */
  refusals?: RefusalCounter;
}

/** The browser's answers (a credential is a few kilobytes at most); a body that is no JSON is refused as such. */
const parseJson = express.json({ limit: '64kb' });
const json = (req: Request, res: Response, next: (err?: unknown) => void) =>
  parseJson(req, res, (err?: unknown) =>
    err ? refuse(res, 400, 'BAD_USER_INPUT', 'body', texts(localeOf(req)).passkey.malformed) : next(),
  );
const form = express.urlencoded({ extended: false, limit: '16kb' });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const bodyOf = (req: Request) => (req.body ?? {}) as Record<string, unknown>;
const localeOf = (req: Request) => req.params['locale'] as string;
const security = (locale: string) => `${dashboardPath(locale)}#security`;

/** A refusal the page's script shows: a stable code, the field it concerns, and a sentence in the page's language. */
const refuse = (res: Response, status: 400 | 401 | 403, code: string, field: string, message: string) =>
  res.status(status).json({ code, field, message });

/** The name typed for a passkey: trimmed, 1 to 100 characters without control characters; undefined when not. */
function nameOf(req: Request): string | undefined {
  const raw = bodyOf(req)['name'];
  if (typeof raw !== 'string') return undefined;
  // eslint-disable-next-line no-control-regex
  const name = raw.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return name && name.length <= MAX_PASSKEY_NAME ? name : undefined;
}

/**
 * Passkeys: added, renamed and removed in the dashboard's "Security" section; used to sign in
 * without a password, as the second step after one, and to confirm an action (step-up). The
 * ceremonies are JSON posts from the page's script (with the form's CSRF token): options first,
 * then the authenticator's answer.
 */
export function passkeyRoutes(deps: PasskeyDeps): Router {
  const router = Router();
  signInWithPasskey(router, deps);
  manage(router, deps);
  return router;
}

/** Whether this address may present another assertion; one that has spent its budget is answered 429 with Retry-After. */
async function assertionAllowed({ limits, refusals }: PasskeyDeps, req: Request, res: Response): Promise<boolean> {
  const state = await limits?.perIp.state(req.ip ?? 'unknown');
  if (!state?.blocked) return true;
  refusals?.inc({ limit: 'second_factor' });
  res.setHeader('Retry-After', String(state.resetSeconds));
  res.status(429).json({
    code: 'RATE_LIMITED',
    field: 'response',
    message: texts(localeOf(req)).secondFactor.tooMany(Math.ceil(state.resetSeconds / 60)),
  });
  return false;
}

/** A refused assertion counts against its address. */
const countRefused = ({ limits }: PasskeyDeps, req: Request) => limits?.perIp.fail(req.ip ?? 'unknown');

function signInWithPasskey(router: Router, deps: PasskeyDeps): void {
  const { passkeys, factors, pending, sessions, securityLog } = deps;
  // Without a password: any passkey of this site the browser holds says who signs in.
  router.post('/:locale/signin/passkey/options', knownLocale, json, verifyCsrf, async (req, res) => {
    res.json({ options: await passkeys.authenticationOptions(req, res, 'sign-in') });
  });

  router.post('/:locale/signin/passkey', knownLocale, json, verifyCsrf, async (req, res) => {
    const locale = localeOf(req);
    if (!(await assertionAllowed(deps, req, res))) return;
    const checked = await passkeys.authenticate(req, res, 'sign-in', bodyOf(req)['response']);
    if ('refused' in checked) {
      await countRefused(deps, req);
      return refuse(res, 401, 'UNAUTHENTICATED', 'response', texts(locale).passkey.refused);
    }
    const { passkey } = checked;
    await pending.end(req, res);
    await sessions.start(req, res, { id: passkey.userId, email: passkey.email }, { amr: ['hwk'] });
    await securityLog?.recordAfter({
      userId: passkey.userId,
      type: 'passkey_sign_in',
      context: requestContext(req),
    });
    res.json({ redirect: returnPath(bodyOf(req)['next']) ?? dashboardPath(locale) });
  });

  // After the password: the passkeys of the user who gave it.
  router.post('/:locale/signin/second-factor/passkey/options', knownLocale, json, verifyCsrf, async (req, res) => {
    const locale = localeOf(req);
    const signingIn = await pending.find(req);
    if (!signingIn) return refuse(res, 401, 'UNAUTHENTICATED', 'response', texts(locale).passkey.expired);
    if (!(await factors.passkeys.count(signingIn.userId)))
      return refuse(res, 400, 'BAD_USER_INPUT', 'response', texts(locale).passkey.noneToUse);
    res.json({ options: await passkeys.authenticationOptions(req, res, 'second-step', signingIn.userId) });
  });

  router.post('/:locale/signin/second-factor/passkey', knownLocale, json, verifyCsrf, async (req, res) => {
    const locale = localeOf(req);
    const t = texts(locale).passkey;
    const signingIn = await pending.find(req);
    if (!signingIn) return refuse(res, 401, 'UNAUTHENTICATED', 'response', t.expired);
    if (!(await assertionAllowed(deps, req, res))) return;
    const checked = await passkeys.authenticate(req, res, 'second-step', bodyOf(req)['response'], signingIn.userId);
    if ('refused' in checked) {
      await countRefused(deps, req);
      return refuse(res, 401, 'UNAUTHENTICATED', 'response', t.refused);
    }
    // The half-finished sign-in becomes one session, once.
    if (!(await pending.finish(req, res))) return refuse(res, 401, 'UNAUTHENTICATED', 'response', t.expired);
    await sessions.start(req, res, { id: signingIn.userId, email: signingIn.email }, { amr: ['pwd', 'hwk'] });
    await securityLog?.recordAfter({
      userId: signingIn.userId,
      type: 'sign_in',
      context: requestContext(req),
      detail: { factor: 'passkey' },
    });
    res.json({ redirect: signingIn.next ?? dashboardPath(locale) });
  });
}

function manage(router: Router, { passkeys, factors, sessions, securityLog }: PasskeyDeps): void {
  const signedInJson = (req: Request, res: Response, next: (err?: unknown) => void) => {
    if (browserOf(res)) return next();
    refuse(res, 401, 'UNAUTHENTICATED', 'session', texts(localeOf(req)).passkey.signedOut);
  };
  const signedIn = (req: Request, res: Response, next: (err?: unknown) => void) => {
    if (browserOf(res)) return next();
    const locale = localeOf(req);
    res.redirect(303, `/${locale}/signin?next=${encodeURIComponent(dashboardPath(locale))}`);
  };
  /** Adding or removing a passkey, for a user with a second factor, needs one given in the last ten minutes. */
  const confirmedEnough = async (res: Response) => {
    const { session } = browserOf(res)!;
    return recentSecondFactor(session) || !(await factors.enrolled(session.userId));
  };
  const confirmFirst = (locale: string) => `/${locale}/developer/security/confirm?next=${encodeURIComponent(dashboardPath(locale))}`;

  router.post('/:locale/developer/security/passkeys/options', knownLocale, signedInJson, json, verifyCsrf, async (req, res) => {
    const locale = localeOf(req);
    const { session } = browserOf(res)!;
    if (!nameOf(req)) return refuse(res, 400, 'BAD_USER_INPUT', 'name', texts(locale).passkey.nameInvalid);
    if (!(await confirmedEnough(res))) return refuse(res, 403, 'FORBIDDEN', 'session', texts(locale).passkey.confirmFirst);
    res.json({ options: await passkeys.registrationOptions(req, res, { id: session.userId, email: session.email }) });
  });

  router.post('/:locale/developer/security/passkeys', knownLocale, signedInJson, json, verifyCsrf, async (req, res) => {
    const locale = localeOf(req);
    const t = texts(locale).passkey;
    const { session } = browserOf(res)!;
    const name = nameOf(req);
    if (!name) return refuse(res, 400, 'BAD_USER_INPUT', 'name', t.nameInvalid);
    const added = await passkeys.register(req, res, session.userId, bodyOf(req)['response'], name);
    if ('refused' in added) return refuse(res, 400, 'BAD_USER_INPUT', 'response', t.notAdded);
    const detail = { factor: 'passkey', factorName: name };
    await securityLog?.recordAfter({ userId: session.userId, type: 'factor_added', context: requestContext(req), detail });
    res.json({ redirect: security(locale) });
  });

  // Step-up with a passkey: as a code on the confirm page, it confirms actions for the next ten minutes.
  router.post('/:locale/developer/security/confirm/passkey/options', knownLocale, signedInJson, json, verifyCsrf, async (req, res) => {
    const locale = localeOf(req);
    const { session } = browserOf(res)!;
    if (!(await factors.passkeys.count(session.userId)))
      return refuse(res, 400, 'BAD_USER_INPUT', 'response', texts(locale).passkey.noneToUse);
    res.json({ options: await passkeys.authenticationOptions(req, res, 'step-up', session.userId) });
  });

  router.post('/:locale/developer/security/confirm/passkey', knownLocale, signedInJson, json, verifyCsrf, async (req, res) => {
    const locale = localeOf(req);
    const checked = await passkeys.authenticate(req, res, 'step-up', bodyOf(req)['response'], browserOf(res)!.session.userId);
    if ('refused' in checked) return refuse(res, 401, 'UNAUTHENTICATED', 'response', texts(locale).passkey.refused);
    await sessions.confirmSecondFactor(res, 'hwk');
    res.json({ redirect: returnPath(bodyOf(req)['next']) ?? `${dashboardPath(locale)}#create-token` });
  });

  router.post('/:locale/developer/security/passkeys/:id/rename', knownLocale, signedIn, form, verifyCsrf, async (req, res) => {
    const locale = localeOf(req);
    const id = req.params['id'] as string;
    const name = nameOf(req);
    const { session } = browserOf(res)!;
    if (!name) {
      const user = { email: session.email, csrf: session.csrf };
      return res.status(400).send(passkeyNamePage({ locale, user, passkeyId: id, error: texts(locale).passkey.nameInvalid }));
    }
    if (UUID.test(id)) await factors.passkeys.rename(session.userId, id, name);
    res.redirect(303, security(locale));
  });

  router.post('/:locale/developer/security/passkeys/:id/remove', knownLocale, signedIn, form, verifyCsrf, async (req, res) => {
    const locale = localeOf(req);
    const id = req.params['id'] as string;
    // Whoever holds the session must also hold a second factor (given in the last ten minutes) to remove one.
    if (!(await confirmedEnough(res))) return res.redirect(303, confirmFirst(locale));
    const { userId } = browserOf(res)!.session;
    if (UUID.test(id) && (await factors.passkeys.remove(userId, id)))
      await securityLog?.recordAfter({ userId, type: 'factor_removed', context: requestContext(req), detail: { factor: 'passkey' } });
    res.redirect(303, security(locale));
  });
}
