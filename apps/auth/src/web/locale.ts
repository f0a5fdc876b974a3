import type { RequestHandler } from 'express';

/** Pages live under `/<locale>/…` (spec §5.1). English is the only translation so far. */
export const LOCALES = ['en'] as const;
export const DEFAULT_LOCALE = 'en';

/** Lets an unknown locale fall through to the 404 handler instead of rendering a page. */
export const knownLocale: RequestHandler = (req, _res, next) => {
  next((LOCALES as readonly string[]).includes(String(req.params['locale'])) ? undefined : 'route');
};
