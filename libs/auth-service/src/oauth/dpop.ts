import type { Request, Response } from 'express';
import { DpopError } from '@trading/auth';
import type { Client } from '../registry/registry.service';
import type { OAuthContext } from './context';
import { oauthErrors } from './errors';

/**
 * A client's DPoP policy as the registry records it (issue 27): `dpopBoundAccessTokens` (RFC 9449
 * §5.2's dpop_bound_access_tokens; new PROD credentials get it by default, the registry decides)
 * and, per app, whether the server nonce is required. Read structurally, so a registry that does
 * not carry them yet means "not required".
 */
export interface DpopClientPolicy {
  dpopBoundAccessTokens?: boolean;
  dpopNonceRequired?: boolean;
}

const policyOf = (client: Client): DpopClientPolicy => client as Client & DpopClientPolicy;

/** Where clients send token requests: the URL the metadata advertises ({base_url}, through the facade) and auth's own. */
export const tokenEndpointUrls = (ctx: OAuthContext) => [`${ctx.settings.apiUrl}/oauth/token`, `${ctx.settings.issuer}/oauth/token`];

/**
 * The DPoP proof of a token request (RFC 9449 §5), checked after the client authenticated:
 * the thumbprint of its key, to bind the tokens to; undefined when the request has none (bearer
 * tokens), unless the app must use DPoP. With a nonce required (DPOP_NONCE_REQUIRED, or the app's
 * policy), every answer carries the current `DPoP-Nonce`, and a proof without it gets 400
 * use_dpop_nonce.
 */
export async function tokenRequestProof(ctx: OAuthContext, req: Request, res: Response, client: Client): Promise<string | undefined> {
  const policy = policyOf(client);
  const proof = req.get('dpop');
  if (proof === undefined) {
    if (policy.dpopBoundAccessTokens)
      throw oauthErrors.invalidDpopProof(
        'This app must use DPoP (registered with dpop_bound_access_tokens): send a DPoP proof header with every token request',
      );
    return undefined;
  }
  const nonceRequired = ctx.dpop.nonceRequired || !!policy.dpopNonceRequired;
  if (nonceRequired) res.setHeader('DPoP-Nonce', ctx.dpop.nonces.current());
  try {
    const { jkt } = await ctx.dpop.verifier.verify({
      proof,
      method: req.method,
      urls: tokenEndpointUrls(ctx),
      nonces: nonceRequired ? ctx.dpop.nonces : undefined,
    });
    return jkt;
  } catch (err) {
    if (!(err instanceof DpopError)) throw err;
    if (err.error === 'use_dpop_nonce') throw oauthErrors.useDpopNonce(err.message, ctx.dpop.nonces.current());
    throw oauthErrors.invalidDpopProof(err.message);
  }
}
