import { Router } from 'express';
import { CLIENT_ADDRESS_HEADER, type InternalClaimsVerifier } from '@trading/auth';
import { errors } from '@trading/errors';
import type { Environment, RegistryService } from '../registry/registry.service';

/** On auth's internal listener: the web origins the facade answers CORS for. */
const WEB_ORIGINS_PATH = '/internal/web-origins';

/**
 * Every web origin registered for this deployment's environment by an ACTIVE app, as
 * `{ environment, origins }`. The facade asks for the whole (small) set every few seconds and
 * answers each `Origin` from memory, so no browser traffic, however much, reaches PostgreSQL;
 * a suspended app's origins drop out at the facade's next refresh.
 *
 * Only the facade may ask, by its own identity: a CLIENT_ADDRESS_HEADER it signed (claims for
 * nobody, addressed to auth, seconds-lived). The list is not secret (each origin shows in the
 * preflight answers), but the full list of vendors' sites is nobody else's business.
 */
export function webOriginsRoute(registry: RegistryService, environment: Environment, verifier: InternalClaimsVerifier): Router {
  const router = Router();
  router.get(WEB_ORIGINS_PATH, async (req, res) => {
    const signed = await verifier.verify(req.get(CLIENT_ADDRESS_HEADER), 'client-address');
    if (signed?.caller !== 'rest-facade') throw errors.unauthenticated("The REST facade's signed identity is required");
    res.setHeader('Cache-Control', 'no-store');
    res.json({ environment, origins: await registry.webOrigins(environment) });
  });
  return router;
}
