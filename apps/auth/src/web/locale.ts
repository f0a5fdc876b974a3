import type { RequestHandler } from 'express';

/** Pages live under `/<locale>/…` (spec §5.1). The login and consent pages are translated; the dashboard is English. */
export const LOCALES = ['en', 'de'] as const;
export const DEFAULT_LOCALE = 'en';

/** Lets an unknown locale fall through to the 404 handler instead of rendering a page. */
export const knownLocale: RequestHandler = (req, _res, next) => {
  next((LOCALES as readonly string[]).includes(String(req.params['locale'])) ? undefined : 'route');
};

/** The first supported locale of `ui_locales` (RFC 6749 / OIDC style) or Accept-Language; English otherwise. */
export function preferredLocale(uiLocales: unknown, acceptLanguage: string | undefined): string {
  const wanted = [...(typeof uiLocales === 'string' ? uiLocales.split(/\s+/) : []), ...(acceptLanguage ?? '').split(',').map((part) => part.split(';')[0]!.trim())];
  for (const tag of wanted) {
    const base = tag.toLowerCase().split('-')[0];
    if ((LOCALES as readonly string[]).includes(base ?? '')) return base!;
  }
  return DEFAULT_LOCALE;
}
