import express, { Router } from 'express';
import { DpopError, type DpopVerifier } from '@trading/auth';
import { AppError, errors } from '@trading/errors';
import { rateLimited, rateLimitHeaders, type RefusalCounter } from '@trading/rate-limit';
import type { PatLogin } from './pat-login';

/** DPoP at PAT login: the proofs' verifier and the URLs a login is sent to (`{base_url}/pat/login`, auth's own). */
export interface PatLoginDpop {
  verifier: DpopVerifier;
  urls: string[];
}

/**
 * POST {base_url}/pat/login `{ token }` → `{ userId, token }`, no bearer token needed; each 429 counted as `pat_login`.
 * With a DPoP proof (RFC 9449), the session token is bound to the proof's key (`cnf.jkt`) and the
 * edges then want a proof by that key with every call; a bad proof is a 400 before any login attempt.
 */
export function loginRoute(login: PatLogin, refusals: RefusalCounter, dpop?: PatLoginDpop): Router {
  return Router().post('/pat/login', express.json({ limit: '4kb' }), async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    // Not a login attempt at all (no JSON object): a 400 naming the body, never counted as a failed login.
    if (!req.is('application/json') || typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) {
      throw errors.badInput('body', 'The body must be a JSON object: { "token": "tpat_…" }');
    }
    const proof = req.get('dpop');
    let jkt: string | undefined;
    if (proof !== undefined) {
      if (!dpop) throw errors.badInput('header.DPoP', 'DPoP proofs are not accepted here');
      try {
        ({ jkt } = await dpop.verifier.verify({ proof, method: req.method, urls: dpop.urls }));
      } catch (err) {
        if (!(err instanceof DpopError)) throw err;
        throw new AppError('BAD_USER_INPUT', err.message, { field: 'header.DPoP', details: { error: 'invalid_dpop_proof' } });
      }
    }
    const answer = await login.attempt({
      token: (req.body as { token?: unknown } | undefined)?.token,
      ip: req.ip,
      userAgent: req.get('user-agent'),
      jkt,
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
