import { Router } from 'express';
import type { InternalClaimsCodec } from '@trading/auth';
import type { LoginActivityService } from './login-activity.service';
import { loginActivityRoute } from './login-activity.route';
import { loginRoute } from './login.route';
import type { PatLogin } from './pat-login';
import type { PatService } from './pat.service';
import { revokeRoute } from './revoke.route';

/** Public PAT endpoints, reached through the facade at `{base_url}/pat/*`; one file per endpoint. */
export function patRoutes(deps: { pats: PatService; login: PatLogin; activity: LoginActivityService; codec: InternalClaimsCodec }): Router {
  return Router().use(loginRoute(deps.login), revokeRoute(deps.pats, deps.codec), loginActivityRoute(deps.activity, deps.codec));
}
