import type { Request, Response } from 'express';

/**
 * The first value of cookie `name` that decodes. One that does not (`%E0%A4%A`, which anyone on a
 * sibling domain can plant) counts as absent rather than failing every page that reads cookies.
 */
export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0 || part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      continue; // a planted copy may come before the real one: keep looking
    }
  }
  return undefined;
}

/** Plain HTTP is only acceptable on the developer's own machine. */
const isLocalHost = (hostname: string) => ['localhost', '127.0.0.1', '::1', '[::1]'].includes(hostname);

/** HttpOnly (no script can read it), SameSite=Lax (not sent on cross-site POSTs), Secure except on localhost. */
export function setCookie(req: Request, res: Response, name: string, value: string, maxAgeSeconds: number): void {
  const flags = [`${name}=${encodeURIComponent(value)}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAgeSeconds}`];
  if (!isLocalHost(req.hostname)) flags.push('Secure');
  res.append('Set-Cookie', flags.join('; '));
}

export const clearCookie = (req: Request, res: Response, name: string) => setCookie(req, res, name, '', 0);
