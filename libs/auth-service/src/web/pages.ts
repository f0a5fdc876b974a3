import { Router, type RequestHandler } from 'express';
import type { Logger } from '@trading/logging';
import { assetRoutes } from './assets';
import type { BrowserSessions } from './browser-sessions';
import { pageErrors } from './error.page';
import { pageHeaders } from './security-headers';

/** `/<locale>/<page>`: the paths that are HTML pages, as opposed to the JSON APIs beside them. */
const PAGE_PATH = /^\/[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*\/(signin|signout|developer|login)(\/|$)/;

/**
 * The server-rendered pages under {login_url}: page security headers, the browser session,
 * HTML error pages. API routes never pass through here.
 */
export function pageRouter(sessions: BrowserSessions, logger: Logger, pages: Router[]): Router {
  const inner = Router();
  inner.use(pageHeaders, sessions.load(), ...pages, pageErrors(logger));
  const onlyPages: RequestHandler = (req, res, next) => (PAGE_PATH.test(req.path) ? inner(req, res, next) : next());
  return Router().use(assetRoutes(), onlyPages);
}
