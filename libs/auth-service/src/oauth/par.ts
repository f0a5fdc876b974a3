import { createHash, randomBytes } from 'node:crypto';
import express, { Router } from 'express';
import { checkAuthorizationRequest, type AuthorizationRequest, type CheckedRequest } from './authorize';
import { authenticateClient, requestParams } from './client-auth';
import type { ClientLimits } from './client-limits';
import type { OAuthContext } from './context';
import { clientRequestProof, parEndpointUrls } from './dpop';
import { profileOf } from '../registry/client-policy';
import { noStore, OAuthError, oauthErrors, type OAuthErrorCode } from './errors';

/** RFC 9126 §2.2. */
const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';
/** Client credentials travel with a pushed request but are no part of the authorization request. */
const CLIENT_AUTH_PARAMS = new Set(['client_secret', 'client_assertion', 'client_assertion_type']);

/** Redis keeps only the request_uri's SHA-256 (sealed, with the request it stands for). */
const pushedKey = (requestUri: string) => `oauth-par:${createHash('sha256').update(requestUri).digest('base64url')}`;

/** A pushed authorization request: its client, the checked parameters, until when it may be used. */
interface PushedRequest {
  clientId: string;
  params: Record<string, string>;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/**
 * POST {base_url}/oauth/par (RFC 9126): the client authenticates exactly as at the token
 * endpoint (both dialects, secret or private_key_jwt, the same failure limits and budget), the
 * request is checked exactly as GET /oauth/authorize would check it (errors as OAuth JSON), and
 * it is kept for OAUTH_PAR_TTL_SECONDS (60) under a random request_uri, bound to the client, for
 * one use.
 */
export function parRoute(ctx: OAuthContext, limits: ClientLimits): Router {
  return Router().post(
    '/oauth/par',
    express.json({ limit: '16kb' }),
    express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 40 }),
    async (req, res) => {
      noStore(res);
      const params = requestParams(req);
      const client = await authenticateClient(ctx, req, res, params, limits);
      if (params['request_uri'] !== undefined) throw oauthErrors.invalidRequest('request_uri must not be pushed (RFC 9126 §2.1)');
      const query: Record<string, string> = { client_id: client.clientId };
      for (const [name, value] of Object.entries(params)) if (!CLIENT_AUTH_PARAMS.has(name) && value !== undefined) query[name] = value;
      // RFC 9449 §10.1: a proof sent with the pushed request binds its code to that key, as dpop_jkt does.
      const jkt = await clientRequestProof(ctx, req, res, client, parEndpointUrls(ctx));
      if (jkt && query['dpop_jkt'] !== undefined && query['dpop_jkt'] !== jkt)
        throw oauthErrors.invalidDpopProof('dpop_jkt names another key than the DPoP proof sent with this request');
      if (jkt) query['dpop_jkt'] = jkt;
      // FAPI 2.0: the code is bound to the client's DPoP key from the start.
      if (profileOf(client) === 'fapi2' && query['dpop_jkt'] === undefined)
        throw oauthErrors.invalidDpopProof(
          'This app follows the fapi2 profile: send a DPoP proof with the pushed request (or dpop_jkt), so that its code is bound to your DPoP key',
        );

      const checked = await checkAuthorizationRequest(ctx, query, { pushed: true });
      if (!checked.ok) {
        if ('page' in checked) throw oauthErrors.invalidRequest(checked.page);
        throw new OAuthError(checked.error as OAuthErrorCode, checked.description);
      }
      const ttl = ctx.settings.parTtlSeconds;
      const requestUri = `${REQUEST_URI_PREFIX}${randomBytes(32).toString('base64url')}`;
      const pushed: PushedRequest = { clientId: client.clientId, params: query, expiresAt: Date.now() + ttl * 1000 };
      await ctx.store.set(pushedKey(requestUri), JSON.stringify(pushed), ttl);
      res.status(201).json({ request_uri: requestUri, expires_in: ttl });
    },
  );
}

/**
 * The authorization request behind a login page's query: the query itself, or — with
 * `request_uri` — the pushed request it names (every other parameter but client_id, which must
 * match, is ignored; RFC 9126 §4). A pushed request is spent only when `answered` says this visit
 * answers it (the user is signed in, freshly enough for it, or it asked for no page), so the way
 * through the sign-in page keeps it; unknown, expired, spent or another client's request_uri: an
 * error page, never a redirect.
 */
export async function resolveAuthorizationRequest(
  ctx: OAuthContext,
  query: Record<string, unknown>,
  answered: (request: AuthorizationRequest) => boolean,
): Promise<CheckedRequest> {
  const requestUri = query['request_uri'];
  if (requestUri === undefined) return checkAuthorizationRequest(ctx, query);
  const clientId = query['client_id'];
  if (typeof clientId !== 'string' || !clientId) return { ok: false, page: 'client_id is missing (or repeated).' };
  const unusable = {
    ok: false as const,
    page: 'This request_uri is unknown, has expired or was already used: go back to the app and start again.',
  };
  if (typeof requestUri !== 'string' || !requestUri.startsWith(REQUEST_URI_PREFIX) || requestUri.length > 200) return unusable;
  const raw = await ctx.store.get(pushedKey(requestUri));
  if (!raw) return unusable;
  const pushed = JSON.parse(raw) as PushedRequest;
  if (pushed.clientId !== clientId || pushed.expiresAt <= Date.now()) return unusable;
  // Checked again as it stands now: the app may have been suspended, or a redirect URI removed, since.
  const checked = await checkAuthorizationRequest(ctx, pushed.params, { pushed: true });
  if (!checked.ok || !answered(checked.request)) return checked;
  // Deleting is what spends it: of two uses, one gets the consent page.
  if ((await ctx.store.del(pushedKey(requestUri))) !== 1) return unusable;
  return checked;
}
