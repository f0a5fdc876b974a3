import type { Request, Response } from 'express';
import { DpopError } from '@trading/auth';
import type { Client } from '../registry/registry.service';
import type { OAuthContext } from './context';
import { oauthErrors } from './errors';

/**
 * A client's DPoP policy as the registry records it: `dpopBoundAccessTokens` (RFC 9449 §5.2's
 * dpop_bound_access_tokens; the fapi2 profile sets it) and, per app, whether the server nonce is
 * required. Read structurally, so a registry that does not carry them means "not required".
 */
interface DpopClientPolicy {
  dpopBoundAccessTokens?: boolean;
  dpopNonceRequired?: boolean;
}

const policyOf = (client: Client): DpopClientPolicy => client as Client & DpopClientPolicy;

/** Where clients send token requests: the URL the metadata advertises ({base_url}, through the facade) and auth's own. */
const tokenEndpointUrls = (ctx: OAuthContext) => [`${ctx.settings.apiUrl}/oauth/token`, `${ctx.settings.issuer}/oauth/token`];
/** The same for pushed authorization requests. */
export const parEndpointUrls = (ctx: OAuthContext) => [`${ctx.settings.apiUrl}/oauth/par`, `${ctx.settings.issuer}/oauth/par`];

/**
 * The DPoP proof of a token request (RFC 9449 §5), checked after the client authenticated:
 * the thumbprint of its key, to bind the tokens to; undefined when the request has none (bearer
 * tokens), unless the app must use DPoP. With a nonce required (DPOP_NONCE_REQUIRED, or the app's
 * policy), every answer carries the current `DPoP-Nonce`, and a proof without it gets 400
 * use_dpop_nonce.
 */
export async function tokenRequestProof(ctx: OAuthContext, req: Request, res: Response, client: Client): Promise<string | undefined> {
  if (req.get('dpop') === undefined && policyOf(client).dpopBoundAccessTokens)
    throw oauthErrors.invalidDpopProof(
      'This app must use DPoP (registered with dpop_bound_access_tokens): send a DPoP proof header with every token request',
    );
  return clientRequestProof(ctx, req, res, client, tokenEndpointUrls(ctx));
}

/**
 * The DPoP proof of a client-authenticated request to `urls` (token or PAR endpoint), if it
 * carries one: the thumbprint of its key. The app's nonce rule applies (DPoP-Nonce on every answer).
 */
export async function clientRequestProof(
  ctx: OAuthContext,
  req: Request,
  res: Response,
  client: Client,
  urls: string[],
): Promise<string | undefined> {
  const policy = policyOf(client);
  const proof = req.get('dpop');
  if (proof === undefined) return undefined;
  const nonceRequired = ctx.dpop.nonceRequired || !!policy.dpopNonceRequired;
  if (nonceRequired) res.setHeader('DPoP-Nonce', ctx.dpop.nonces.current());
  try {
    const { jkt } = await ctx.dpop.verifier.verify({
      proof,
      method: req.method,
      urls,
      nonces: nonceRequired ? ctx.dpop.nonces : undefined,
    });
    return jkt;
  } catch (err) {
    if (!(err instanceof DpopError)) throw err;
    if (err.error === 'use_dpop_nonce') throw oauthErrors.useDpopNonce(err.message, ctx.dpop.nonces.current());
    throw oauthErrors.invalidDpopProof(err.message);
  }
}
