import type { RequestHandler } from 'express';

/** Pages live under `/<locale>/…` (spec §5.1). The login and consent pages are translated; the dashboard is English. */
export const LOCALES = ['en', 'de', 'fr'] as const;
export const DEFAULT_LOCALE = 'en';

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
    `${asked.replace('_', '-')} ${typeof req.query['ui_locales'] === 'string' ? req.query['ui_locales'] : ''}`,
    req.get('accept-language'),
  );
  const rest = req.originalUrl.slice(asked.length + 1);
  res.redirect(req.method === 'GET' ? 302 : 307, `/${locale}${rest}`);
};

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
