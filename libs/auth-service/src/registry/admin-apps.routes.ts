import { Router } from 'express';
import { LEGACY_MIX, profileOf, type ClientPolicy } from './client-policy';
import type { IssuedCredentials, RegistryService, VendorApp } from './registry.service';

const appSummary = (app: VendorApp) => ({
  appId: app.id,
  appName: app.appName,
  companyName: app.companyName,
  businessEmail: app.businessEmail,
  status: app.status,
  environment: app.environment,
  approvedScopes: app.approvedScopes,
  createdAt: app.createdAt.toISOString(),
  suspendedAt: app.suspendedAt?.toISOString() ?? null,
});

/** The secret appears in this answer and in the mail to the business e-mail, nowhere else. */
const issued = (c: IssuedCredentials) => ({
  ...appSummary(c.app),
  environment: c.environment,
  clientId: c.clientId,
  clientSecret: c.clientSecret,
  redirectUris: c.redirectUris,
  webOrigins: c.webOrigins,
  ...policyView(c.policy),
});

/** An environment's profile, client authentication and policy (public keys are public: shown as registered). */
const policyView = (p: ClientPolicy) => ({
  profile: profileOf(p),
  ...(profileOf(p) === LEGACY_MIX
    ? {
        warning:
          'These credentials follow neither OAuth profile (a mix of spec and FAPI 2.0 settings): move them to spec or fapi2 with apps set-profile',
      }
    : {}),
  tokenEndpointAuthMethod: p.tokenEndpointAuthMethod,
  ...(p.jwks ? { jwks: p.jwks } : {}),
  ...(p.jwksUri ? { jwksUri: p.jwksUri } : {}),
  requirePushedAuthorizationRequests: p.requirePushedAuthorizationRequests,
  dpopBoundAccessTokens: p.dpopBoundAccessTokens,
  dpopNonceRequired: p.dpopNonceRequired,
  requireSecondFactor: p.requireSecondFactor,
});

/**
 * The registry's admin API (behind the admin credential, used by `npm run admin -- apps …`).
 * `:app` is an app id or any of its client ids.
 */
export function adminAppRoutes(registry: RegistryService): Router {
  const router = Router();
  router.post('/admin/apps', async (req, res) => {
    const body = (req.body ?? {}) as { registration?: unknown; approvedScopes?: unknown };
    res.status(201).json(issued(await registry.provision(body.registration, { approvedScopes: body.approvedScopes })));
  });
  router.get('/admin/apps', async (_req, res) => {
    const apps = await registry.list();
    res.json({
      apps: apps.map((a) => ({
        ...appSummary(a),
        environments: a.credentials.map((c) => ({
          environment: c.environment,
          clientId: c.clientId,
          redirectUris: c.redirectUris,
          webOrigins: c.webOrigins,
          createdAt: c.createdAt.toISOString(),
          secretRotatedAt: c.secretRotatedAt.toISOString(),
          ...policyView(c.policy),
        })),
      })),
    });
  });
  router.post('/admin/apps/:app/promote', async (req, res) => {
    const body = (req.body ?? {}) as { to?: unknown; redirectUris?: unknown; webOrigins?: unknown; pages?: unknown; policy?: unknown };
    const { to, redirectUris, webOrigins, pages, policy } = body;
    res.status(201).json(issued(await registry.promote(req.params['app'] as string, { to, redirectUris, webOrigins, pages, policy })));
  });
  router.post('/admin/apps/:app/profile', async (req, res) => {
    const body = (req.body ?? {}) as { environment?: unknown; policy?: unknown };
    const changed = await registry.setProfile(req.params['app'] as string, body.environment, body.policy);
    res.json({ ...appSummary(changed.app), environment: changed.environment, clientId: changed.clientId, ...policyView(changed.policy) });
  });
  router.post('/admin/apps/:app/rotate-secret', async (req, res) => {
    res.json(
      issued(await registry.rotateSecret(req.params['app'] as string, (req.body as { environment?: unknown } | undefined)?.environment)),
    );
  });
  router.post('/admin/apps/:app/suspend', async (req, res) => {
    const { app, grantsRevoked } = await registry.suspend(req.params['app'] as string);
    res.json({ ...appSummary(app), grantsRevoked });
  });
  return router;
}
