import { Router, type RequestHandler } from 'express';
import type { Logger } from '@trading/logging';
import { pageHeaders } from '@trading/service';
import { assetRoutes } from './assets';
import type { BrowserSessions } from './browser-sessions';
import { pageErrors, problemPage } from './error.page';
import { languageRoutes } from './language.routes';
import { LOCALES } from './locale';

/**
 * The paths that are HTML pages, as opposed to the JSON APIs beside them: `/<locale>/<page>`,
 * the front page (below), the language switcher (`/language/<locale>`) and the problem pages (`/problems/<code>`).
 */
const PAGE_PATH =
  /^\/([A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*\/(signin|signout|developer|login|forgot-password|reset-password)|language|problems)(\/|$)/;
/** The front page: `/` (which picks the language) and `/<locale>/`. */
const HOME_PATH = new RegExp(`^/(${LOCALES.join('|')})?/?$`);

/**
 * The server-rendered pages under {login_url}: page security headers, the browser session,
 * HTML error pages. API routes never pass through here.
 */
export function pageRouter(sessions: BrowserSessions, logger: Logger, pages: Router[]): Router {
  const inner = Router();
  const own = Router().use(languageRoutes()).get('/problems/:code', problemPage);
  inner.use(pageHeaders, sessions.load(), own, ...pages, pageErrors(logger));
  const onlyPages: RequestHandler = (req, res, next) =>
    PAGE_PATH.test(req.path) || HOME_PATH.test(req.path) ? inner(req, res, next) : next();
  return Router().use(assetRoutes(), onlyPages);
}
