import { Router } from 'express';
import type { InternalClaimsVerifier } from '@trading/auth';
import { claimsOf, requireClaims } from '../internal/require-claims';
import type { LoginActivityService } from './login-activity.service';

/** GET {base_url}/pat/login-activity?limit=&cursor=&from=&to= → the caller's PAT logins, newest first. */
export function loginActivityRoute(activity: LoginActivityService, verifier: InternalClaimsVerifier): Router {
  return Router().get('/pat/login-activity', requireClaims(verifier, ['read:accounts'], { patSessionOnly: true }), async (req, res) => {
    const { limit, cursor, from, to } = req.query;
    res.setHeader('Cache-Control', 'no-store');
    res.json(await activity.list(claimsOf(res).sub, { limit, cursor, from, to }));
  });
}
