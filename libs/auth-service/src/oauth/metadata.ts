import { Router } from 'express';
import { DPOP_ALGORITHMS, SCOPES } from '@trading/auth';
import { LOCALES } from '../web/locale';
import type { OAuthSettings } from './context';

/** RFC 8414 authorization-server metadata, at {login_url}/.well-known/oauth-authorization-server. */
export function metadataRoute(settings: OAuthSettings): Router {
  const document = {
    issuer: settings.issuer,
    authorization_endpoint: `${settings.apiUrl}/oauth/authorize`,
    token_endpoint: `${settings.apiUrl}/oauth/token`,
    revocation_endpoint: `${settings.apiUrl}/oauth/revoke`,
    userinfo_endpoint: `${settings.apiUrl}/oauth/userinfo`,
    jwks_uri: `${settings.issuer}/.well-known/jwks.json`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    ui_locales_supported: [...LOCALES],
    authorization_response_iss_parameter_supported: true,
    // RFC 9449 §5.1: DPoP proofs are accepted at the token endpoint (and the API) with these algorithms.
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
    // Non-standard but useful: where users sign in (spec §5.1's documented entry point).
    login_page: `${settings.issuer}/{locale}/login`,
    environment: settings.environment,
  };
  return Router().get('/.well-known/oauth-authorization-server', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(document);
  });
}
