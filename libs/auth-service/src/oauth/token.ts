import express, { Router } from 'express';
import { authenticateClient, requestParams } from './client-auth';
import { tokenRequestProof } from './dpop';
import type { ClientLimits } from './client-limits';
import type { OAuthContext } from './context';
import { noStore, oauthErrors } from './errors';
import { authCodeGrant } from './grants/auth-code';
import { readRefreshRecord, refreshTokenGrant } from './grants/refresh-token';

/** The documented JSON body spells grant types in capitals (AUTH_CODE, REFRESH_TOKEN); RFC 6749 clients send the standard names. Both work either way. */
const GRANT_TYPES: Record<string, typeof authCodeGrant | typeof refreshTokenGrant> = {
  AUTH_CODE: authCodeGrant,
  authorization_code: authCodeGrant,
  REFRESH_TOKEN: refreshTokenGrant,
  refresh_token: refreshTokenGrant,
};

/** POST {base_url}/oauth/token: exchange a code, or refresh (RFC 6749 §4.1.3, §6). */
export function tokenRoute(ctx: OAuthContext, limits: ClientLimits): Router {
  return Router().post(
    '/oauth/token',
    express.json({ limit: '8kb' }),
    express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 }),
    async (req, res) => {
      noStore(res);
      const params = requestParams(req);
      const grantType = params['grant_type'];
      if (!grantType) throw oauthErrors.invalidRequest('grant_type is required');
      const grant = Object.hasOwn(GRANT_TYPES, grantType) ? GRANT_TYPES[grantType] : undefined;
      const record = grant === refreshTokenGrant ? readRefreshRecord(ctx, params) : undefined;
      const client = await authenticateClient(ctx, req, res, params, limits);
      if (!grant)
        throw oauthErrors.unsupportedGrantType(`grant_type must be AUTH_CODE or REFRESH_TOKEN (authorization_code or refresh_token)`);
      // DPoP (RFC 9449): with a proof, the tokens are bound to its key.
      const jkt = await tokenRequestProof(ctx, req, res, client);
      res.json(await grant(ctx, client, params, jkt, record));
    },
  );
}
