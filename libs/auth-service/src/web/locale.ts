import type { Request, RequestHandler } from 'express';
import { readCookie } from './cookies';

/** Pages live under `/<locale>/…`, like the login page; every page is in English, German and French. */
export const LOCALES = ['en', 'de', 'fr'] as const;
export const DEFAULT_LOCALE = 'en';

/** The language a person chose with the switcher; without it, Accept-Language decides. */
export const LANG_COOKIE = 'lang';
export const isLocale = (value: unknown): value is string => typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
const chosen = (req: Request) => {
  const value = readCookie(req, LANG_COOKIE);
  return isLocale(value) ? value : '';
};

/** The language of a page whose path names none (the 404 page, /problems/…): the chosen one, else Accept-Language. */
export function localeOf(req: Request): string {
  const first = req.path.split('/')[1];
  return isLocale(first) ? first : preferredLocale(chosen(req), req.get('accept-language'));
}

/**
 * A page under a locale this site does not spell that way (`/en-US/login`, `/EN/login`,
 * `/es/login`) is not a 404 for a person: it goes, with its query, to the best locale —
 * the path's language if supported, then `ui_locales`, then Accept-Language, then English.
 */
export const knownLocale: RequestHandler = (req, res, next) => {
  const asked = String(req.params['locale']);
  if ((LOCALES as readonly string[]).includes(asked)) return next();
  if (!/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$/.test(asked)) return next('route');
  const locale = preferredLocale(
    `${asked.replace('_', '-')} ${chosen(req)} ${typeof req.query['ui_locales'] === 'string' ? req.query['ui_locales'] : ''}`,
    req.get('accept-language'),
  );
  const rest = req.originalUrl.slice(asked.length + 1);
  res.redirect(req.method === 'GET' ? 302 : 307, `/${locale}${rest}`);
};

/**
 * For a request arriving without a page language (`/oauth/authorize`): the person's own choice
 * (the switcher's cookie) first, then the app's `ui_locales` hint, then Accept-Language.
 */
export const requestLocale = (req: Request, uiLocales: unknown) =>
  preferredLocale(`${chosen(req)} ${typeof uiLocales === 'string' ? uiLocales : ''}`, req.get('accept-language'));

/** The first supported locale of `ui_locales` (RFC 6749 / OIDC style) or Accept-Language; English otherwise. */
export function preferredLocale(uiLocales: unknown, acceptLanguage: string | undefined): string {
  const wanted = [
    ...(typeof uiLocales === 'string' ? uiLocales.split(/\s+/).filter(Boolean) : []),
    ...(acceptLanguage ?? '').split(',').map((part) => part.split(';')[0]!.trim()),
  ];
  for (const tag of wanted) {
    const base = tag.toLowerCase().split('-')[0];
    if ((LOCALES as readonly string[]).includes(base ?? '')) return base!;
  }
  return DEFAULT_LOCALE;
}

/** The switcher's link back to the page it was on, in another language: the path keeps its query (an OAuth request in flight stays). */
export function languageLink(to: string, here: string): string {
  return `/language/${to}?back=${encodeURIComponent(here)}`;
}
