import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import type { FailureLimiter, RefusalCounter, RequestLimiter } from '@trading/rate-limit';
import type { GrantService } from '../oauth/grants';
import type { PatService } from '../pat/pat.service';
import type { BrowserSessions } from '../web/browser-sessions';
import { csrfToken, verifyCsrf } from '../web/csrf';
import { knownLocale } from '../web/locale';
import { returnPath } from '../web/return-path';
import { requestContext } from '../security-log/security-log';
import { texts } from '../web/texts';
import { normaliseEmail, passwordProblem, PASSWORD_RULES } from '../users/users.service';
import { forgotPage, linkInvalidPage, resetPage, sentPage } from './password-reset.page';
import type { PasswordResets } from './password-reset.service';
import type { ResetMailBudget } from './reset-mail-budget';

export interface PasswordResetDeps {
  resets: PasswordResets;
  sessions: BrowserSessions;
  /** What "sign out everywhere and revoke all tokens" ends, through the services that revoke them one by one. */
  credentials: { pats: Pick<PatService, 'revokeAllOfUser'>; grants: Pick<GrantService, 'revokeAllOfUser'> };
  limits: {
    /** Reset requests (and new-password posts) per client address per minute. */
    perAddress: RequestLimiter;
    /** Reset mails per (account, address) and per account, with a floor of one per account. */
    mails: ResetMailBudget;
    /** The sign-in limiter per (account, address): a successful reset clears this browser's count. */
    signInPerAccount: FailureLimiter;
  };
  refusals: RefusalCounter;
}

/**
 * GET/POST /<locale>/forgot-password and /<locale>/reset-password: password reset by e-mail.
 *
 * The limits never stand between a person and signing in: they are separate counters from the
 * sign-in ones, asking for a link changes nothing about the account (the old password keeps
 * working until a link is used), and a request over a mail budget gets the same answer, just no
 * new mail. Nobody else's requests keep the owner from a link (see `ResetMailBudget`).
 */
export function passwordResetRoutes(deps: PasswordResetDeps): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '8kb' });
  const overAddressBudget = addressBudget(deps);
  router.get('/:locale/forgot-password', knownLocale, forgotPasswordPage);
  router.post('/:locale/forgot-password', knownLocale, form, verifyCsrf, requestLink(deps.resets, deps.limits.mails, overAddressBudget));
  router.get('/:locale/reset-password', knownLocale, resetPasswordPage(deps.resets));
  router.post('/:locale/reset-password', knownLocale, form, verifyCsrf, setNewPassword(deps, overAddressBudget));
  return router;
}

const text = (v: unknown, max: number) => (typeof v === 'string' ? v.slice(0, max) : '');

/** The seconds to wait when this address is over its budget of requests, else undefined. */
type AddressBudget = (ip: string) => Promise<number | undefined>;

/** Per address: a 429 page (it says nothing about any account). */
function addressBudget({ limits, refusals }: PasswordResetDeps): AddressBudget {
  return async (ip) => {
    const state = await limits.perAddress.take(ip);
    if (!state?.blocked) return undefined;
    refusals.inc({ limit: 'password_reset' });
    return state.resetSeconds;
  };
}

function forgotPasswordPage(req: Request, res: Response): void {
  const locale = req.params['locale'] as string;
  res.send(forgotPage({ locale, csrf: csrfToken(req, res), next: returnPath(req.query['next']) }));
}

/** A reset link asked for: the same answer whether or not the account exists, or is over a mail budget. */
function requestLink(resets: PasswordResets, mails: ResetMailBudget, overAddressBudget: AddressBudget): RequestHandler {
  return async (req, res) => {
    const locale = req.params['locale'] as string;
    const body = req.body as Record<string, unknown>;
    const email = text(body['email'], 320).trim();
    const next = returnPath(body['next']);
    const t = texts(locale);
    if (!/^[^\s@]+@[^\s@]+$/.test(email))
      return void res.status(400).send(forgotPage({ locale, csrf: csrfToken(req, res), email, next, error: t.signIn.emailInvalid }));
    const wait = await overAddressBudget(req.ip ?? 'unknown');
    if (wait !== undefined) {
      res.setHeader('Retry-After', String(wait));
      return void res
        .status(429)
        .send(forgotPage({ locale, csrf: csrfToken(req, res), email, next, error: t.reset.tooMany(Math.ceil(wait / 60)) }));
    }
    // The same work for every address, existing or not: the budgets (Redis), then at most a recorded
    // request. The lookup, the link and the mail come after the answer, so it cannot depend on them.
    const account = normaliseEmail(email);
    if (await mails.allows(account, req.ip ?? 'unknown')) await resets.request(account, locale);
    res.send(sentPage({ locale, email, minutes: resets.minutes, next }));
  };
}

function resetPasswordPage(resets: PasswordResets): RequestHandler {
  return async (req, res) => {
    const locale = req.params['locale'] as string;
    const token = text(req.query['token'], 100);
    if (!(await resets.isLive(token))) return void res.status(400).send(linkInvalidPage(locale));
    res.send(resetPage({ locale, csrf: csrfToken(req, res), token }));
  };
}

/** The new password, on a live link: every browser of the account signed out, and its tokens too if the person asked. */
function setNewPassword({ resets, sessions, credentials, limits }: PasswordResetDeps, overAddressBudget: AddressBudget): RequestHandler {
  return async (req, res) => {
    const locale = req.params['locale'] as string;
    const body = req.body as Record<string, unknown>;
    const token = text(body['token'], 100);
    const password = text(body['newPassword'], PASSWORD_RULES.max + 1);
    const confirm = text(body['confirmPassword'], PASSWORD_RULES.max + 1);
    // A checkbox sends its value only when ticked: absent means the person unticked it.
    const signOutEverywhere = body['signOutEverywhere'] === 'yes';
    const t = texts(locale).reset;
    const wait = await overAddressBudget(req.ip ?? 'unknown');
    if (wait !== undefined) {
      res.setHeader('Retry-After', String(wait));
      return void res.status(429).send(
        resetPage({
          locale,
          csrf: csrfToken(req, res),
          token,
          signOutEverywhere,
          errors: { newPassword: t.tooMany(Math.ceil(wait / 60)) },
        }),
      );
    }
    const problem = passwordProblem(password);
    const errors = {
      newPassword:
        problem === 'too-short' ? t.tooShort(PASSWORD_RULES.min) : problem === 'too-long' ? t.tooLong(PASSWORD_RULES.max) : undefined,
      confirmPassword: !problem && confirm !== password ? t.differ : undefined,
    };
    if (errors.newPassword || errors.confirmPassword) {
      if (!(await resets.isLive(token))) return void res.status(400).send(linkInvalidPage(locale));
      return void res.status(400).send(resetPage({ locale, csrf: csrfToken(req, res), token, signOutEverywhere, errors }));
    }
    const done = await resets.complete(token, password, locale, signOutEverywhere, requestContext(req));
    if (!done) return void res.status(400).send(linkInvalidPage(locale));
    // Ticked: every PAT and app grant ends too, with their live sessions, so every edge refuses them at once.
    if (signOutEverywhere) {
      await credentials.pats.revokeAllOfUser(done.userId);
      await credentials.grants.revokeAllOfUser(done.userId);
    }
    // Every browser signed in as this user is signed out (this one too).
    await sessions.endAllFor(done.userId);
    await sessions.end(req, res);
    // Someone who locked themselves out here by trying old passwords may sign in at once.
    await limits.signInPerAccount.clear(`${done.email}|${req.ip ?? 'unknown'}`);
    res.redirect(303, `/${locale}/signin?reset=done`);
  };
}
