import { Router } from 'express';
import { setCookie } from './cookies';
import { isLocale, LANG_COOKIE, LOCALES } from './locale';
import { pathOf, returnPath, returnUrl } from './return-path';

const ONE_YEAR_SECONDS = 365 * 24 * 3600;
const LEADING_LOCALE = new RegExp(`^/(${LOCALES.join('|')})(?=/|$)`);

/**
 * GET /language/<locale>?back=<this page>: remembers the choice in the `lang` cookie (a
 * preference, nothing secret) and reloads the same page in that language. `back` is a path on
 * this site only (no open redirect); its `/<locale>/` prefix, if any, is swapped, and so is
 * that of the page it continues to (`next`).
 */
export function languageRoutes(): Router {
  return Router().get('/language/:to', (req, res) => {
    const to = req.params['to'];
    if (!isLocale(to)) return void res.redirect(303, '/en/signin');
    setCookie(req, res, LANG_COOKIE, to, ONE_YEAR_SECONDS);
    const fallback = `/${to}/signin`;
    const back = returnUrl(returnPath(req.query['back']) ?? fallback);
    back.pathname = back.pathname.replace(LEADING_LOCALE, `/${to}`);
    // The page a sign-in continues to (an authorization request) follows the choice too.
    const next = returnPath(back.searchParams.get('next'));
    if (next) back.searchParams.set('next', next.replace(LEADING_LOCALE, `/${to}`));
    else if (back.searchParams.has('next')) back.searchParams.delete('next');
    back.hash = '';
    res.redirect(303, pathOf(back) ?? fallback);
  });
}
