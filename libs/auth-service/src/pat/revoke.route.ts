import express, { Router } from 'express';
import type { InternalClaimsVerifier } from '@trading/auth';
import { claimsOf, requireClaims } from '../internal/require-claims';
import { requestContext } from '../security-log/security-log';
import type { PatService } from './pat.service';

/**
 * POST {base_url}/pat/revoke `{ "tokenId": "tpat_…" }`, as the token's owner (authenticated by
 * the facade). Managing PATs is an account setting, hence write:accounts; READ_ONLY sessions
 * are already refused by the method rule. Answers 200 every time, also when already revoked.
 */
export function revokeRoute(pats: PatService, verifier: InternalClaimsVerifier): Router {
  return Router().post(
    '/pat/revoke',
    requireClaims(verifier, ['write:accounts'], { patSessionOnly: true }),
    express.json({ limit: '4kb' }),
    async (req, res) => {
      const tokenId = (req.body as { tokenId?: unknown } | undefined)?.tokenId;
      const pat = await pats.revoke(claimsOf(res).sub, tokenId, new Date(), requestContext(req));
      res.setHeader('Cache-Control', 'no-store');
      res.json({ tokenId: pat.id, revokedAt: pat.revokedAt!.toISOString() });
    },
  );
}
