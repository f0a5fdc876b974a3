import type { RequestHandler, Response } from 'express';

/**
 * Every page: scripts and styles only from our own files (no inline code, so an injected
 * tag cannot run), forms post only to us, and never inside a frame (clickjacking).
 */
const POLICY: Record<string, string[]> = {
  'default-src': ["'none'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'"],
  'connect-src': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
  'base-uri': ["'none'"],
};

const render = (policy: Record<string, string[]>) =>
  Object.entries(policy)
    .map(([k, v]) => `${k} ${v.join(' ')}`)
    .join('; ');

export const CONTENT_SECURITY_POLICY = render(POLICY);

/**
 * The policy with a few more sources for one page. The consent page shows the app's logo, and
 * its form's answer is a redirect to the app: browsers apply form-action to that redirect too.
 */
export function widenPolicy(res: Response, extra: { img?: string[]; formAction?: string[] }): void {
  const policy = {
    ...POLICY,
    'img-src': [...POLICY['img-src']!, ...(extra.img ?? [])],
    'form-action': [...POLICY['form-action']!, ...(extra.formAction ?? [])],
  };
  res.setHeader('Content-Security-Policy', render(policy));
}

export const pageHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  // Pages show tokens and account activity: never keep them in a cache.
  res.setHeader('Cache-Control', 'no-store');
  next();
};
