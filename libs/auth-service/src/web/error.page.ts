import type { NextFunction, Request, Response } from 'express';
import { AppError, problemFromError } from '@trading/errors';
import type { Logger } from '@trading/logging';
import { html } from './html';
import { DEFAULT_LOCALE } from './locale';
import { layout } from './layout';

/** Errors on pages become pages (not problem+json); only AppError messages are shown. */
export function pageErrors(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const known = err instanceof AppError;
    if (!known) logger.error({ err, requestId: req.requestId }, 'unhandled page error');
    const status = known ? err.status : 500;
    const message = known ? err.message : `Something went wrong. Quote ${req.requestId} when contacting support.`;
    const locale = typeof req.params?.['locale'] === 'string' ? req.params['locale'] : DEFAULT_LOCALE;
    res.status(status).send(
      layout({
        title: 'Error',
        locale,
        body: html`<section class="card narrow"><h1>${problemFromError(err).title}</h1><p class="alert" role="alert">${message}</p><p><a href="/${locale}/developer">Back to the dashboard</a></p></section>`,
      }),
    );
  };
}
