import type { RequestHandler } from 'express';

/**
 * Every page: scripts and styles only from our own files (no inline code, so an injected
 * tag cannot run), forms post only to us, and never inside a frame (clickjacking).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export const pageHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  // Pages show tokens and account activity: never keep them in a cache.
  res.setHeader('Cache-Control', 'no-store');
  next();
};
