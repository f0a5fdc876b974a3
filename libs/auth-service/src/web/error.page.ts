import type { NextFunction, Request, Response } from 'express';
import { AppError, ERROR_STATUS, isErrorCode, isTransientFailure, type ErrorCode } from '@trading/errors';
import type { Logger } from '@trading/logging';
import { pageHeaders } from '@trading/service';
import { browserOf } from './browser-sessions';
import { CsrfError } from './csrf';
import { html, type SafeHtml } from './html';
import { isLocale, localeOf } from './locale';
import { layout } from './layout';
import { texts } from './texts';

export interface ErrorView {
  locale: string;
  title: string;
  /** For the person: plain words in their language. */
  message: string;
  /** For the developer: the exact reason, collapsed under "Technical details". */
  technical?: string;
  requestId?: string;
  /** This page's path, for the language switcher. */
  here?: string;
  /** Where "back" goes: the dashboard when signed in, else the sign-in page. */
  signedIn?: boolean;
  extra?: SafeHtml;
}

/** An error page: the person's sentence first, the technical detail and reference folded away for whoever debugs it. */
export function errorPage(view: ErrorView): string {
  const t = texts(view.locale).errors;
  return layout({
    title: view.title,
    locale: view.locale,
    here: view.here,
    body: html`<section class="card narrow" id="error-page">
  <h1 id="error-title">${view.title}</h1>
  <p class="alert" role="alert" id="error-message">${view.message}</p>
  ${view.extra ?? ''}
  ${
    view.technical || view.requestId
      ? html`<details class="technical" id="error-technical"><summary>${t.technical}</summary>
    ${view.technical ? html`<p><code>${view.technical}</code></p>` : ''}
    ${view.requestId ? html`<p class="hint">${t.reference(view.requestId)}</p>` : ''}
  </details>`
      : ''
  }
  <p>${view.signedIn ? html`<a href="/${view.locale}/developer">${t.dashboard}</a>` : html`<a href="/${view.locale}/signin">${t.home}</a>`}</p>
</section>`,
  });
}

/** The localised name and sentence of an error code. */
function problemText(locale: string, code: ErrorCode): { title: string; text: string } {
  const [title, text] = texts(locale).problems[code];
  return { title, text };
}

const hereOf = (req: Request) => (req.method === 'GET' ? req.originalUrl : req.path);
const pageLocale = (req: Request) => (isLocale(req.params?.['locale']) ? (req.params['locale'] as string) : localeOf(req));

/** Errors on pages become pages (not problem+json), in the page's language; the AppError's own words go under "Technical details". */
export function pageErrors(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const known = err instanceof AppError;
    const transient = !known && isTransientFailure(err);
    if (!known && !transient) logger.error({ err, requestId: req.requestId }, 'unhandled page error');
    const code: ErrorCode = known ? err.code : transient ? 'SERVICE_UNAVAILABLE' : 'INTERNAL_SERVER_ERROR';
    const locale = pageLocale(req);
    const { title, text } = problemText(locale, code);
    const message = err instanceof CsrfError ? texts(locale).errors.formExpired : text;
    res.status(known ? err.status : ERROR_STATUS[code]).send(
      errorPage({
        locale,
        title,
        message,
        technical: known ? err.message : undefined,
        requestId: req.requestId,
        here: hereOf(req),
        signedIn: !!browserOf(res),
      }),
    );
  };
}

/** Does the caller want a page (a browser: text/html before any JSON type), not problem+json? */
const wantsHtml = (req: Request) => req.accepts(['application/problem+json', 'application/json', 'text/html']) === 'text/html';

/**
 * The auth app's public origin, last: a browser asking for an address that does not exist gets a
 * localised 404 page; an API client still gets problem+json (finishService's 404).
 */
export function htmlNotFound() {
  return (req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !wantsHtml(req)) return next();
    pageHeaders(req, res, () => {
      const locale = localeOf(req);
      const t = texts(locale).errors;
      res
        .status(404)
        .send(errorPage({ locale, title: t.notFoundTitle, message: t.notFound, here: req.originalUrl, requestId: req.requestId }));
    });
  };
}

/** `/problems/<code>`: the page a problem's `type` URL names (libs/errors builds them on this origin). */
export function problemPage(req: Request, res: Response): void {
  const locale = localeOf(req);
  const slug = String(req.params['code'] ?? '');
  const code = slug.toUpperCase().replace(/-/g, '_');
  const t = texts(locale).errors;
  if (!/^[a-z-]{1,40}$/.test(slug) || !isErrorCode(code)) {
    res.status(404).send(errorPage({ locale, title: t.notFoundTitle, message: t.problemUnknown, here: req.originalUrl }));
    return;
  }
  const { title, text } = problemText(locale, code);
  res.send(
    layout({
      title,
      locale,
      here: req.originalUrl,
      body: html`<section class="card narrow" id="problem" data-code="${code}">
  <p class="hint">${t.problemIntro}</p>
  <h1 id="problem-title">${title}</h1>
  <p id="problem-text">${text}</p>
  <dl class="facts"><dt>${t.problemCode}</dt><dd><code>${code}</code></dd><dt>${t.problemStatus}</dt><dd><code>${ERROR_STATUS[code]}</code></dd></dl>
</section>`,
    }),
  );
}
