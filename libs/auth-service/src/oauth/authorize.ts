import { Router } from 'express';
import { UNRESTRICTED_SCOPES } from '@trading/auth';
import type { Client } from '../registry/registry.service';
import { requestLocale } from '../web/locale';
import type { OAuthContext } from './context';
import { isS256Challenge } from './pkce';
import { isOidcScope, parseScopes, type GrantScope } from './scopes';

/** A checked authorization request (the login page's query, RFC 6749 §4.1.1, RFC 7636 §4.3). */
export interface AuthorizationRequest {
  client: Client;
  redirectUri: string;
  scope: GrantScope[];
  state?: string;
  codeChallenge: string;
  /** OpenID Connect: echoed in the id_token, binding it to the app's session (replay protection). */
  nonce?: string;
  /** RFC 9449 §10: the thumbprint of the DPoP key the code will be redeemed with, and no other. */
  dpopJkt?: string;
  /** OpenID Connect `prompt`: `none` (answer without any page), `login` (sign in again), `consent` (always asked here). */
  prompt?: Prompt[];
  /** OpenID Connect `max_age`: the sign-in may be at most this many seconds old, or the user signs in again. */
  maxAge?: number;
  /** OpenID Connect `acr_values`: the authentication context classes the app asks for, in order of preference. */
  acrValues?: string[];
}

export type Prompt = 'none' | 'login' | 'consent' | 'select_account';
export const PROMPT_VALUES: readonly Prompt[] = ['none', 'login', 'consent', 'select_account'];
/** Some 31 years: any larger max_age says no more than this (no sign-in session lives that long). */
const MAX_MAX_AGE = 10 ** 9;

export type CheckedRequest =
  | { ok: true; request: AuthorizationRequest }
  /** The client or redirect URI cannot be trusted: an error page, never a redirect (RFC 6749 §4.1.2.1). */
  | { ok: false; page: string }
  /** Anything else: back to the app with error, error_description and state (a pushed request answers them as JSON). */
  | { ok: false; redirect: string; error: string; description: string };

const MAX_STATE = 1024;
const MAX_NONCE = 512;
const JWK_THUMBPRINT = /^[A-Za-z0-9_-]{43}$/;

/** The app's redirect URI with the authorization response parameters added (keeping its own query), and `iss` (RFC 9207). */
export function responseUrl(redirectUri: string, params: Record<string, string | undefined>, issuer: string): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries({ ...params, iss: issuer })) if (v !== undefined) url.searchParams.append(k, v);
  return url.toString();
}

/** Why a request goes back to the app refused: the error and its description. */
interface Refusal {
  error: string;
  description: string;
}

const refusal = (error: string, description: string): Refusal => ({ error, description });

/** The optional parameters of a checked request, each present only when given. */
type OptionalParameters = Pick<AuthorizationRequest, 'nonce' | 'dpopJkt' | 'prompt' | 'maxAge' | 'acrValues'>;

/**
 * Checks everything before anything is shown. Only once the client is known in this
 * environment and the redirect URI is one of its own (exact string match) may errors go back
 * to the app; until then the user gets an error page.
 */
export async function checkAuthorizationRequest(
  ctx: OAuthContext,
  query: Record<string, unknown>,
  options: { pushed?: boolean } = {},
): Promise<CheckedRequest> {
  const target = await redirectTarget(ctx, query);
  if ('page' in target) return { ok: false, page: target.page };
  const { client, redirectUri } = target;

  const rawState = query['state'];
  const state = typeof rawState === 'string' && rawState.length <= MAX_STATE ? rawState : undefined;
  const fail = ({ error, description }: Refusal): CheckedRequest => ({
    ok: false,
    redirect: responseUrl(redirectUri, { error, error_description: description, state }, ctx.settings.issuer),
    error,
    description,
  });
  if (rawState !== undefined && state === undefined)
    return fail(refusal('invalid_request', `state must be given once, at most ${MAX_STATE} characters`));
  const refused = clientRequestProblem(ctx, client, query, options);
  if (refused) return fail(refused);
  const pkce = codeChallengeOf(query);
  if ('error' in pkce) return fail(pkce);
  const scope = requestedScopes(client, query);
  if ('error' in scope) return fail(scope);
  const bindings = nonceAndKey(query);
  if ('error' in bindings) return fail(bindings);
  const signIn = promptAndMaxAge(query);
  if ('error' in signIn) return fail(signIn);
  const acr = acrValuesOf(query);
  if ('error' in acr) return fail(acr);
  return {
    ok: true,
    request: {
      client,
      redirectUri,
      scope: scope.scopes,
      state,
      codeChallenge: pkce.codeChallenge,
      ...bindings,
      ...signIn,
      ...acr,
    },
  };
}

/** The client, known in this environment, and a redirect URI of its own; else the error page's text. */
async function redirectTarget(
  ctx: OAuthContext,
  query: Record<string, unknown>,
): Promise<{ client: Client; redirectUri: string } | { page: string }> {
  const clientId = query['client_id'];
  const redirectUri = query['redirect_uri'];
  if (typeof clientId !== 'string' || !clientId) return { page: 'client_id is missing (or repeated).' };
  const client = await ctx.registry.findClient(clientId, ctx.settings.environment, { includeSuspended: true });
  if (!client) return { page: `The app "${clientId.slice(0, 100)}" is not registered in ${ctx.settings.environment}.` };
  if (typeof redirectUri !== 'string' || !redirectUri) return { page: 'redirect_uri is missing (or repeated).' };
  if (!client.redirectUris.includes(redirectUri))
    return {
      page: `redirect_uri is not one of the redirect URIs registered for ${client.app.appName} in ${ctx.settings.environment}.`,
    };
  return { client, redirectUri };
}

/** The app is active, no parameter is repeated, the request came the way the app (or this server) requires, and no request object. */
function clientRequestProblem(
  ctx: OAuthContext,
  client: Client,
  query: Record<string, unknown>,
  options: { pushed?: boolean },
): Refusal | undefined {
  if (client.app.status !== 'ACTIVE') return refusal('unauthorized_client', 'This app is suspended');
  for (const [name, value] of Object.entries(query))
    if (Array.isArray(value)) return refusal('invalid_request', `${name} must not be repeated`);
  // RFC 9126 §4: an app (or this whole server) may take its authorization requests pushed only.
  if (!options.pushed && (ctx.settings.requirePushedAuthorizationRequests || client.requirePushedAuthorizationRequests))
    return refusal(
      'invalid_request',
      `${client.app.appName} must push its authorization requests (PAR, RFC 9126): POST /oauth/par, then send client_id and request_uri only`,
    );
  if (query['request'] !== undefined) return refusal('request_not_supported', 'Request objects (request) are not supported; use PAR');
  return undefined;
}

/** The authorization code flow with PKCE (S256) and nothing else: the code challenge. */
function codeChallengeOf(query: Record<string, unknown>): { codeChallenge: string } | Refusal {
  if (query['response_type'] !== 'code') return refusal('unsupported_response_type', 'response_type must be code');
  const method = query['code_challenge_method'];
  if (method === 'plain') return refusal('invalid_request', 'code_challenge_method plain is not allowed; use S256');
  if (method !== 'S256') return refusal('invalid_request', 'code_challenge_method must be S256');
  const challenge = query['code_challenge'];
  if (challenge === undefined || challenge === '') return refusal('invalid_request', 'code_challenge is required (PKCE, S256)');
  if (!isS256Challenge(challenge))
    return refusal('invalid_request', 'code_challenge must be the base64url SHA-256 of the code_verifier (43 characters)');
  return { codeChallenge: challenge };
}

/** The scopes asked for, each one the app may ask for. */
function requestedScopes(client: Client, query: Record<string, unknown>): { scopes: GrantScope[] } | Refusal {
  // The documented `scopes` (comma-separated) or RFC 6749 `scope` (space-separated).
  const scopes = query['scopes'];
  const scope = query['scope'];
  if (scopes !== undefined && scope !== undefined && scopes !== scope)
    return refusal('invalid_request', 'Send either scopes or scope, not both');
  const raw = scopes ?? scope;
  if (typeof raw !== 'string' || !raw.trim()) return refusal('invalid_scope', 'scopes is required (comma-separated scope values)');
  const parsed = parseScopes(raw);
  if ('unknown' in parsed) return refusal('invalid_scope', `"${parsed.unknown.slice(0, 50)}" is not a scope`);
  // Market data (read:market) every app may ask for; the rest only as approved at registration.
  // OpenID Connect's scopes grant no API access: every app may ask for them (the user sees each on the consent page).
  const unapproved = parsed.scopes.filter(
    (s) => !isOidcScope(s) && !client.app.approvedScopes.includes(s) && !UNRESTRICTED_SCOPES.includes(s),
  );
  if (unapproved.length) return refusal('invalid_scope', `${client.app.appName} is not approved for ${unapproved.join(', ')}`);
  return { scopes: parsed.scopes };
}

/** OpenID Connect's `nonce` and RFC 9449's `dpop_jkt`, when given. */
function nonceAndKey(query: Record<string, unknown>): Pick<OptionalParameters, 'nonce' | 'dpopJkt'> | Refusal {
  const nonce = query['nonce'];
  if (nonce !== undefined && (typeof nonce !== 'string' || !nonce || nonce.length > MAX_NONCE))
    return refusal('invalid_request', `nonce must be 1 to ${MAX_NONCE} characters`);
  const dpopJkt = query['dpop_jkt'];
  if (dpopJkt !== undefined && (typeof dpopJkt !== 'string' || !JWK_THUMBPRINT.test(dpopJkt)))
    return refusal('invalid_request', 'dpop_jkt must be the base64url SHA-256 JWK thumbprint of the DPoP key (43 characters, RFC 7638)');
  return { ...(nonce ? { nonce } : {}), ...(dpopJkt ? { dpopJkt } : {}) };
}

const MAX_ACR_VALUES = 1024;

/** OpenID Connect's `acr_values`, when given: space-separated; values this server does not know are ignored. */
function acrValuesOf(query: Record<string, unknown>): Pick<OptionalParameters, 'acrValues'> | Refusal {
  const raw = query['acr_values'];
  if (raw === undefined) return {};
  if (typeof raw !== 'string' || raw.length > MAX_ACR_VALUES)
    return refusal('invalid_request', `acr_values must be space-separated values, at most ${MAX_ACR_VALUES} characters`);
  return { acrValues: raw.split(' ').filter(Boolean) };
}

/** OpenID Connect's `prompt` and `max_age`, when given. */
function promptAndMaxAge(query: Record<string, unknown>): Pick<OptionalParameters, 'prompt' | 'maxAge'> | Refusal {
  const rawPrompt = query['prompt'];
  let prompt: Prompt[] | undefined;
  if (rawPrompt !== undefined) {
    const values = typeof rawPrompt === 'string' ? rawPrompt.split(' ').filter(Boolean) : [];
    const unknown = values.find((v) => !PROMPT_VALUES.includes(v as Prompt));
    if (!values.length || unknown !== undefined)
      return refusal('invalid_request', `prompt must be space-separated values of ${PROMPT_VALUES.join(', ')}`);
    // OpenID Connect Core: none asks for no page at all, so it goes with no other value.
    if (values.includes('none') && values.length > 1)
      return refusal('invalid_request', 'prompt none must not be combined with other values');
    prompt = [...new Set(values as Prompt[])];
  }
  const rawMaxAge = query['max_age'];
  if (rawMaxAge !== undefined && (typeof rawMaxAge !== 'string' || !/^\d{1,10}$/.test(rawMaxAge) || Number(rawMaxAge) > MAX_MAX_AGE))
    return refusal('invalid_request', `max_age must be a whole number of seconds, 0 to ${MAX_MAX_AGE}`);
  return { ...(prompt ? { prompt } : {}), ...(rawMaxAge !== undefined ? { maxAge: Number(rawMaxAge) } : {}) };
}

/**
 * GET /oauth/authorize: the standard entry point; it leads to the login page with the same
 * parameters, which checks them before showing anything. On auth's own listener the login page is
 * on the same origin (a relative redirect, whatever address the browser used); reached through
 * the facade (`{base_url}/oauth/authorize`), it is on `loginUrl`.
 */
export function authorizeRoute(loginUrl = ''): Router {
  return Router().get('/oauth/authorize', (req, res) => {
    // The person's own choice (the switcher's cookie), then the app's ui_locales, then Accept-Language.
    const locale = requestLocale(req, req.query['ui_locales']);
    const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, `${loginUrl}/${locale}/login${query}`);
  });
}
