import { Router } from 'express';
import { browserOf } from './browser-sessions';
import { homePage } from './home.page';
import { isLocale, requestLocale } from './locale';

/**
 * `GET /` sends a browser to the front page in its language (the switcher's choice, else
 * Accept-Language); `GET /<locale>/` is that page. `apiUrl` is {base_url}: the facade serves
 * the API docs beside it (`http://localhost:8080/v1` → `http://localhost:8080/docs`).
 */
export function homeRoutes(apiUrl: string): Router {
  const docsUrl = new URL('../docs', `${apiUrl.replace(/\/+$/, '')}/`).href;
  const router = Router();
  router.get('/', (req, res) => {
    // The answer depends on these two: a shared cache must not hand one person's language to another.
    res.vary('Accept-Language').vary('Cookie');
    res.redirect(302, `/${requestLocale(req, undefined)}/`);
  });
  router.get('/:locale/', (req, res, next) => {
    const locale = req.params['locale'];
    if (!isLocale(locale)) return next();
    const session = browserOf(res)?.session;
    res.send(homePage({ locale, docsUrl, user: session && { email: session.email, csrf: session.csrf } }));
  });
  return router;
}
