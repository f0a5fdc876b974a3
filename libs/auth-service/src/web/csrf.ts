import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { AppError } from '@trading/errors';
import { browserOf } from './browser-sessions';
import { readCookie, setCookie } from './cookies';

/**
 * CSRF tokens on every form. Signed in: the session's synchronizer token (server-side, in
 * Redis). Signed out (the sign-in form, against login CSRF): a double-submit cookie.
 */
const PRE_SESSION_COOKIE = 'tapi_csrf';
const FIELD = '_csrf';

/** The token to put in the forms of this response. */
export function csrfToken(req: Request, res: Response): string {
  const browser = browserOf(res);
  if (browser) return browser.session.csrf;
  let token = readCookie(req, PRE_SESSION_COOKIE);
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) {
    token = randomBytes(32).toString('base64url');
    setCookie(req, res, PRE_SESSION_COOKIE, token, 3600);
  }
  return token;
}

export class CsrfError extends AppError {
  constructor() {
    super('FORBIDDEN', 'This form has expired or did not come from this site. Reload the page and try again.', { field: FIELD });
  }
}

/** Middleware for every form POST: the submitted token must match the expected one. */
export function verifyCsrf(req: Request, res: Response, next: NextFunction): void {
  const browser = browserOf(res);
  const expected = browser ? browser.session.csrf : readCookie(req, PRE_SESSION_COOKIE);
  const given = (req.body as Record<string, unknown> | undefined)?.[FIELD];
  next(expected && typeof given === 'string' && same(expected, given) ? undefined : new CsrfError());
}

/** Constant-time comparison of two strings of any length. */
const same = (a: string, b: string) => timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
