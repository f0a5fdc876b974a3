import { Router } from 'express';
import { DPOP_ALGORITHMS, SCOPES } from '@trading/auth';
import { CLIENT_ASSERTION_ALGS, TOKEN_ENDPOINT_AUTH_METHODS } from '../registry/client-policy';
import { LOCALES } from '../web/locale';
import { ACR_VALUES } from './id-token';
import { OIDC_SCOPES } from './scopes';

/** What an ID token or userinfo may say (OIDC Core §2, §5.1). */
const ID_TOKEN_CLAIMS = [
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'at_hash',
  'amr',
  'acr',
  'email',
  'email_verified',
  'name',
  'given_name',
  'family_name',
] as const;
import { PROMPT_VALUES } from './authorize';
import type { OAuthSettings } from './context';

/**
 * RFC 8414 authorization-server metadata at {login_url}/.well-known/oauth-authorization-server,
 * and the same document as OpenID Connect Discovery at {login_url}/.well-known/openid-configuration:
 * one set of truths, two addresses.
 */
export function metadataRoute(settings: OAuthSettings): Router {
  const document = {
    issuer: settings.issuer,
    authorization_endpoint: `${settings.apiUrl}/oauth/authorize`,
    token_endpoint: `${settings.apiUrl}/oauth/token`,
    revocation_endpoint: `${settings.apiUrl}/oauth/revoke`,
    userinfo_endpoint: `${settings.apiUrl}/oauth/userinfo`,
    jwks_uri: `${settings.issuer}/.well-known/jwks.json`,
    pushed_authorization_request_endpoint: `${settings.apiUrl}/oauth/par`,
    require_pushed_authorization_requests: settings.requirePushedAuthorizationRequests,
    scopes_supported: [...OIDC_SCOPES, ...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    // OpenID Connect Discovery §3: ID tokens with pairwise subjects, signed like access tokens.
    subject_types_supported: ['pairwise'],
    id_token_signing_alg_values_supported: ['ES256'],
    claims_supported: [...ID_TOKEN_CLAIMS],
    // `acr`: a password and a second factor, or a password alone; acr_values asking for the first are met (or refused).
    acr_values_supported: [...ACR_VALUES],
    claims_parameter_supported: false,
    // Request objects are not taken, by value or by reference; PAR's own request_uri is (pushed_authorization_request_endpoint).
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    token_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
    token_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGS],
    revocation_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
    revocation_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGS],
    ui_locales_supported: [...LOCALES],
    // OpenID Connect: none answers at once (login_required, consent_required); login and max_age ask for a fresh sign-in.
    prompt_values_supported: [...PROMPT_VALUES],
    authorization_response_iss_parameter_supported: true,
    // RFC 9449 §5.1: DPoP proofs are accepted at the token endpoint (and the API) with these algorithms.
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
    // Non-standard but useful: where users sign in (the documented entry point for users).
    login_page: `${settings.issuer}/{locale}/login`,
    environment: settings.environment,
  };
  return Router().get(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'], (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(document);
  });
}
