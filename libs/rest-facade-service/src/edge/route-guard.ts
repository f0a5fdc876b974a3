import type { RequestHandler } from 'express';
import { AppError, errors } from '@trading/errors';

/** A path pattern as the route table writes it (`/oms/:accountId/order/:orderId`) and its methods. */
export interface KnownPath {
  method: string;
  path: string;
}

/** The query parameters each operation takes, by `METHOD /path/:param` (the OpenAPI document's, so the two cannot differ). */
export type QueryParameters = ReadonlyMap<string, readonly string[]>;

/** The known paths as patterns, in the order given (the order Express tries the routes in). */
function patternsOf(known: readonly KnownPath[]) {
  return known.map(({ method, path }) => ({
    method: method.toUpperCase(),
    path,
    regex: new RegExp(`^${path.replace(/:[A-Za-z]+/g, '[^/]+')}/?$`),
  }));
}

/** The methods a path takes, with HEAD beside GET and OPTIONS (answered for every path); none for a path the API does not have. */
function allowedMethods(patterns: ReturnType<typeof patternsOf>, path: string): string[] {
  const allowed = new Set(patterns.filter((p) => p.regex.test(path)).map((p) => p.method));
  if (!allowed.size) return [];
  if (allowed.has('GET')) allowed.add('HEAD');
  allowed.add('OPTIONS');
  return [...allowed].sort();
}

/**
 * Before anyone is asked for a token: a path the API does not have is 404, a method the path
 * does not take is 405 with `Allow` — not a 401 that sends a developer hunting for a token
 * problem they do not have.
 */
export function routeGuard(known: readonly KnownPath[]): RequestHandler {
  const patterns = patternsOf(known);
  return (req, res, next) => {
    const allowed = allowedMethods(patterns, req.path);
    if (!allowed.length) return next(new AppError('NOT_FOUND', `No API path ${req.path}`));
    if (!allowed.includes(req.method.toUpperCase())) {
      res.setHeader('Allow', allowed.join(', '));
      return next(new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${req.path}; use ${allowed.join(', ')}`));
    }
    next();
  };
}

/**
 * A query parameter the operation does not take is refused (400 naming it), before any token
 * check: a misspelt filter (`?clientOrderID=`, `?symbol=` where `symbols=` is meant) would
 * otherwise be ignored and the answer hold everything it was meant to exclude. The parameters
 * are the OpenAPI document's; an operation missing from it stops start-up.
 */
export function queryGuard(known: readonly KnownPath[], parameters: QueryParameters): RequestHandler {
  const patterns = patternsOf(known).map((p) => {
    const taken = parameters.get(`${p.method} ${p.path}`);
    if (!taken) throw new Error(`${p.method} ${p.path} has no operation in the OpenAPI document`);
    return { ...p, taken: new Set(taken) };
  });
  return (req, _res, next) => {
    const method = req.method.toUpperCase() === 'HEAD' ? 'GET' : req.method.toUpperCase();
    const route = patterns.find((p) => p.method === method && p.regex.test(req.path));
    if (!route) return next();
    const unknown = Object.keys(req.query as Record<string, unknown>).find((name) => !route.taken.has(name));
    if (unknown === undefined) return next();
    const taken = [...route.taken];
    next(
      errors.badInput(
        unknown,
        `Unknown query parameter ${JSON.stringify(unknown.slice(0, 40))}: ${req.method} ${route.path.replace(/:(\w+)/g, '{$1}')} takes ${taken.length ? taken.join(', ') : 'none'}`,
      ),
    );
  };
}

/**
 * OPTIONS on a path the API has: 204 with `Allow`, for any authenticated caller (a READ_ONLY
 * token included: it reads nothing but the methods, which the OpenAPI document names anyway).
 * `authenticate` charges the caller's request budgets as for any call, so OPTIONS is never a
 * free way to spend the edge's token checks; it reaches no route, so it never spends an order
 * budget or a stream slot. Mounted before the pass-through to auth, whose router would answer
 * OPTIONS on its paths itself, unauthenticated.
 */
export function optionsAnswer(known: readonly KnownPath[], authenticate: RequestHandler): RequestHandler {
  const patterns = patternsOf(known);
  return (req, res, next) => {
    if (req.method !== 'OPTIONS') return next();
    const allowed = allowedMethods(patterns, req.path);
    if (!allowed.length) return next();
    const answer = (err?: unknown) => {
      if (err) return next(err);
      res.setHeader('Allow', allowed.join(', '));
      res.status(204).end();
    };
    Promise.resolve(authenticate(req, res, answer)).catch(next);
  };
}
