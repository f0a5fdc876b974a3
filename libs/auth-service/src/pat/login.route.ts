import express, { Router } from 'express';
import { errors } from '@trading/errors';
import { rateLimited, rateLimitHeaders, type RefusalCounter } from '@trading/rate-limit';
import type { PatLogin } from './pat-login';

/** POST {base_url}/pat/login `{ token }` → `{ userId, token }` (spec §4.1, §5.2 step 2); each 429 counted as `pat_login`. */
export function loginRoute(login: PatLogin, refusals: RefusalCounter): Router {
  return Router().post('/pat/login', express.json({ limit: '4kb' }), async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    // Not a login attempt at all (no JSON object): a 400 naming the body, never counted as a failed login.
    if (!req.is('application/json') || typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) {
      throw errors.badInput('body', 'The body must be a JSON object: { "token": "tpat_…" }');
    }
    const answer = await login.attempt({
      token: (req.body as { token?: unknown } | undefined)?.token,
      ip: req.ip,
      userAgent: req.get('user-agent'),
    });
    res.set(rateLimitHeaders(answer.limit));
    if (answer.outcome === 'throttled') {
      refusals.inc({ limit: 'pat_login' });
      throw rateLimited(answer.limit, 'Too many failed logins; retry after the time in Retry-After');
    }
    // One uniform answer for every refusal, so a caller learns nothing about why.
    if (answer.outcome === 'refused') throw errors.unauthenticated('Invalid personal access token');
    res.json(answer.session);
  });
}
