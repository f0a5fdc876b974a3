import type { RequestHandler, Response } from 'express';

/** A Content-Security-Policy: each directive with its sources. */
export type PagePolicy = Readonly<Record<string, readonly string[]>>;

/**
 * Every HTML page we serve: scripts and styles only from our own files (no inline code, so an
 * injected tag cannot run), forms post only to us, and never inside a frame (clickjacking).
 */
export const PAGE_POLICY: PagePolicy = {
  'default-src': ["'none'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'"],
  'connect-src': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
  'base-uri': ["'none'"],
};

export const renderPolicy = (policy: PagePolicy) =>
  Object.entries(policy)
    .map(([directive, sources]) => `${directive} ${sources.join(' ')}`)
    .join('; ');

/** The page policy with more sources for a few directives, added to its own (never replacing them). */
export function widenedPolicy(extra: PagePolicy): PagePolicy {
  const policy: Record<string, readonly string[]> = { ...PAGE_POLICY };
  for (const [directive, sources] of Object.entries(extra)) policy[directive] = [...new Set([...(policy[directive] ?? []), ...sources])];
  return policy;
}

/**
 * A page's headers: its policy, no framing for browsers that predate `frame-ancestors`, no
 * guessing of content types, no Referer to the sites it links to (its URLs may carry
 * authorization requests), and never kept in a cache (pages show tokens and account activity).
 */
export function setPageHeaders(res: Response, policy: PagePolicy = PAGE_POLICY): void {
  res.setHeader('Content-Security-Policy', renderPolicy(policy));
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
}

/** Middleware setting the page headers, with `policy` (the page policy unless given). */
export const pageHeadersWith =
  (policy: PagePolicy): RequestHandler =>
  (_req, res, next) => {
    setPageHeaders(res, policy);
    next();
  };

/** Middleware setting the page headers with the page policy. */
export const pageHeaders: RequestHandler = pageHeadersWith(PAGE_POLICY);

/**
 * One response's policy with a few more sources. The consent page shows the app's logo, and its
 * form's answer is a redirect to the app: browsers apply form-action to that redirect too.
 */
export function widenPolicy(res: Response, extra: PagePolicy): void {
  res.setHeader('Content-Security-Policy', renderPolicy(widenedPolicy(extra)));
}
