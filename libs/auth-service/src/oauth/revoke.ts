import express, { Router } from 'express';
import type { JWTPayload } from 'jose';
import { swapResult } from '@trading/redis';
import { ourTokenClaims } from './access-tokens';
import { authenticateClient, requestParams } from './client-auth';
import type { ClientLimits } from './client-limits';
import type { OAuthContext } from './context';
import { noStore, oauthErrors } from './errors';

const anotherClients = () => oauthErrors.unauthorizedClient('This token was not issued to this client; nothing was revoked');
import { plausibleToken, refreshKey, type RefreshRecord } from './token-store';

/**
 * POST {base_url}/oauth/revoke (RFC 7009), client-authenticated. A refresh token ends its whole
 * grant (every access token of it, on the next request anywhere); an access token ends its own
 * session. A token issued to another client is refused (RFC 7009 §2.1: 400 unauthorized_client)
 * and nothing is revoked; only a valid token of ours can be recognised as one, so this tells a
 * client nothing it could not read from the token itself. Unknown, malformed and expired tokens
 * get 200 (an empty JSON object, which strict JSON clients accept), as §2.2 asks.
 */
export function revokeRoute(ctx: OAuthContext, verify: (token: string) => Promise<JWTPayload>, limits: ClientLimits): Router {
  return Router().post(
    '/oauth/revoke',
    express.json({ limit: '8kb' }),
    express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 }),
    async (req, res) => {
      noStore(res);
      const params = requestParams(req);
      const client = await authenticateClient(ctx, req, res, params, limits);
      const token = params['token'];
      if (!token) throw oauthErrors.invalidRequest('token is required');

      if (plausibleToken(token)) {
        const found = swapResult(await ctx.store.get(refreshKey(token)));
        if (found) {
          const record = JSON.parse(found.value) as RefreshRecord;
          if (record.grant.clientId !== client.clientId) throw anotherClients();
          await ctx.grants.revoke(record.grant.id, 'CLIENT');
          return void res.status(200).json({});
        }
      }
      const claims = token.length < 4096 ? await ourTokenClaims(verify, token) : null;
      // A PAT or another client's access token is not this client's to revoke.
      if (claims && (claims['kind'] !== 'oauth' || claims['client_id'] !== client.clientId)) throw anotherClients();
      if (claims && typeof claims['sid'] === 'string') await ctx.sessions.revoke(claims['sid']);
      res.status(200).json({});
    },
  );
}
