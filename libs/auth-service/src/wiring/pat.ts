import type { DpopVerifier } from '@trading/auth';
import type { RefusalCounter } from '@trading/rate-limit';
import { patAccountRoutes, patLoginRoutes } from '../pat/pat.routes';
import type { Listeners } from './listeners';
import type { AuthServices } from './services';
import { withoutTrailingSlash } from './urls';

/** PAT login on both listeners (a DPoP proof names either public URL); the account's PATs and their activity on the internal one. */
export function mountPatRoutes(
  { config, login, pats, activity, verifier }: AuthServices,
  { app, internal }: Listeners,
  refusals: RefusalCounter,
  dpopVerifier: DpopVerifier,
): void {
  const apiUrl = withoutTrailingSlash(config.AUTH_API_URL);
  const issuerUrl = withoutTrailingSlash(config.AUTH_ISSUER);
  const patLogin = patLoginRoutes({
    login,
    refusals,
    dpop: { verifier: dpopVerifier, urls: [`${apiUrl}/pat/login`, `${issuerUrl}/pat/login`] },
  });
  app.use(patLogin);
  internal.use(patLogin, patAccountRoutes({ pats, activity, verifier }));
}
