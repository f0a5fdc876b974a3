/** Errors as problem+json, and the 404 and error handler every listener ends with. */
import { type Express, type NextFunction, type Request, type Response } from 'express';
import { AppError, isTransientFailure, PROBLEM_CONTENT_TYPE, problem, problemFromError, wwwAuthenticate } from '@trading/errors';
import { type Logger } from '@trading/logging';
import { prefersPage, sendProblemPage, type ProblemPageLinks } from './problem-page';

/** How long a caller refused with 503 waits before trying again: our outages we expect to ride out last seconds. */
export const RETRY_AFTER_UNAVAILABLE_S = 1;

/**
 * Sends an error as problem+json (with WWW-Authenticate on 401 and scope 403s, Retry-After on 503);
 * with `pages`, a browser gets the same problem as a page (programs keep problem+json).
 */
export function sendProblem(res: Response, err: unknown, requestId: string | undefined, pages?: ProblemPageLinks): void {
  const body = problemFromError(err, requestId);
  if (err instanceof AppError) {
    const challenge = wwwAuthenticate(err);
    if (challenge) res.setHeader('WWW-Authenticate', challenge);
  }
  if (body.status === 503) res.setHeader('Retry-After', String(RETRY_AFTER_UNAVAILABLE_S));
  if (pages) res.vary('Accept');
  if (pages && prefersPage(res.req)) return sendProblemPage(res.req, res, body, pages);
  res.status(body.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
}

export interface FinishOptions {
  /** Answer browsers' errors with a page linking to these (a listener people open: the facade's public one). */
  problemPages?: ProblemPageLinks;
}

/** 404 for unknown paths and one error handler that never leaks internals. */
export function finishService(app: Express, logger: Logger, options: FinishOptions = {}): void {
  const pages = options.problemPages;
  app.use((req, res) => {
    const body = problem('NOT_FOUND', `No route for ${req.method} ${req.path}`, { requestId: req.requestId });
    if (pages) res.vary('Accept');
    if (pages && prefersPage(req)) return sendProblemPage(req, res, body, pages);
    res.status(404).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const parseError = err as { type?: string; status?: number };
    if (parseError?.type === 'entity.parse.failed')
      return sendProblem(
        res,
        new AppError('BAD_USER_INPUT', 'The request body is not valid JSON', { field: 'body' }),
        req.requestId,
        pages,
      );
    if (parseError?.type === 'entity.too.large')
      return sendProblem(res, new AppError('BAD_USER_INPUT', 'The request body is too large', { field: 'body' }), req.requestId, pages);
    if (isTransientFailure(err)) logger.warn({ err, requestId: req.requestId }, 'a dependency was briefly unavailable; answered 503');
    else if (!(err instanceof AppError)) logger.error({ err, requestId: req.requestId }, 'unhandled error');
    sendProblem(res, err, req.requestId, pages);
  });
}
