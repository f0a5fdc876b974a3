import type { RequestHandler } from 'express';
import { AppError } from '@trading/errors';

/** A path pattern as the route table writes it (`/oms/:accountId/order/:orderId`) and its methods. */
export interface KnownPath {
  method: string;
  path: string;
}

/**
 * Before anyone is asked for a token: a path the API does not have is 404, a method the path
 * does not take is 405 with `Allow` — not a 401 that sends a developer hunting for a token
 * problem they do not have.
 */
export function routeGuard(known: readonly KnownPath[]): RequestHandler {
  const patterns = new Map<string, { regex: RegExp; methods: Set<string> }>();
  for (const { method, path } of known) {
    const entry = patterns.get(path) ?? { regex: new RegExp(`^${path.replace(/:[A-Za-z]+/g, '[^/]+')}/?$`), methods: new Set<string>() };
    entry.methods.add(method.toUpperCase());
    patterns.set(path, entry);
  }
  return (req, res, next) => {
    const matching = [...patterns.values()].filter((p) => p.regex.test(req.path));
    if (!matching.length) return next(new AppError('NOT_FOUND', `No API path ${req.path}`));
    const allowed = new Set(matching.flatMap((p) => [...p.methods]));
    if (allowed.has('GET')) allowed.add('HEAD');
    if (!allowed.has(req.method.toUpperCase())) {
      res.setHeader('Allow', [...allowed].sort().join(', '));
      return next(new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${req.path}; use ${[...allowed].sort().join(', ')}`));
    }
    next();
  };
}
