import { Router } from 'express';
import type { InternalClaimsVerifier } from '@trading/auth';
import type { RefusalCounter } from '@trading/rate-limit';
import type { LoginActivityService } from './login-activity.service';
import { loginActivityRoute } from './login-activity.route';
import { loginRoute, type PatLoginDpop } from './login.route';
import type { PatLogin } from './pat-login';
import type { PatService } from './pat.service';
import { revokeRoute } from './revoke.route';

/** POST /pat/login: public (a PAT is the credential), reached through the facade at `{base_url}/pat/login`. */
export function patLoginRoutes(deps: { login: PatLogin; refusals: RefusalCounter; dpop?: PatLoginDpop }): Router {
  return loginRoute(deps.login, deps.refusals, deps.dpop);
}

/** The PAT endpoints that act for a signed-in caller: internal listener only, with the facade's signed claims. */
export function patAccountRoutes(deps: { pats: PatService; activity: LoginActivityService; verifier: InternalClaimsVerifier }): Router {
  return Router().use(revokeRoute(deps.pats, deps.verifier), loginActivityRoute(deps.activity, deps.verifier));
}
