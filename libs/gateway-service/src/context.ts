import type { Request, Response } from 'express';
import type { ApiLimits } from '@trading/rate-limit';
import { GraphQLError } from 'graphql';
import {
  INTERNAL_CLAIMS_HEADER,
  type Claims,
  type EdgeAuthenticator,
  type InternalClaimsSigner,
  type InternalClaimsVerifier,
  type ServiceName,
} from '@trading/auth';
import { AppError, errors, wwwAuthenticate } from '@trading/errors';
import type { GraphQLCall } from '@trading/service';

export interface GatewayContext {
  claims: Claims;
  requestId: string;
  /** The claims header for one subgraph (addressed to it), signed once per request and subgraph. */
  claimsFor(subgraph: ServiceName): Promise<string>;
  /**
   * Charges `count` order placements to the caller's order budgets once the operation is parsed
   * (orderBudget plugin); throws the 429 as a GraphQL error. A no-op where the facade already charged.
   */
  chargeOrders(count: number): Promise<void>;
}

const alreadyCharged = () => Promise.resolve();

function contextFor(
  claims: Claims,
  requestId: string,
  signer: InternalClaimsSigner,
  chargeOrders: GatewayContext['chargeOrders'] = alreadyCharged,
): GatewayContext {
  const signed = new Map<ServiceName, Promise<string>>();
  return {
    claims,
    requestId,
    chargeOrders,
    claimsFor: (subgraph) => {
      let header = signed.get(subgraph);
      if (!header) signed.set(subgraph, (header = signer.signFor(claims, subgraph)));
      return header;
    },
  };
}

/** An authentication failure as a GraphQL error with the HTTP status and challenge of the REST side. */
function asGraphQLError(err: unknown): GraphQLError {
  const appError = err instanceof AppError ? err : new AppError('INTERNAL_SERVER_ERROR', 'Authentication failed unexpectedly');
  const headers = new Map<string, string>();
  const challenge = wwwAuthenticate(appError);
  if (challenge) headers.set('www-authenticate', challenge);
  return new GraphQLError(appError.message, { extensions: { code: appError.code, http: { status: appError.status, headers } } });
}

/**
 * Public listener: internal front-ends authenticate with a bearer token, checked here once
 * (signature, live session, IP list). A caller's internal claims header never gets this far:
 * the public listener drops it.
 */
export function publicGatewayContext(
  edge: EdgeAuthenticator,
  signer: InternalClaimsSigner,
  limits: ApiLimits,
  publicUrls: readonly string[],
) {
  return async ({ req, res }: { req: Request; res: Response }): Promise<GatewayContext> => {
    try {
      // A DPoP-bound token's proof names this endpoint's configured public URL (GATEWAY_PUBLIC_URL), never the Host header.
      const request = { proof: req.get('dpop'), method: req.method, urls: publicUrls };
      const claims = await edge
        .authenticate(req.get('authorization'), req.ip, request)
        .catch((err: unknown) => limits.refuseUnknown(req, res, err));
      await limits.forCaller(res, claims);
      const chargeOrders = async (count: number) => {
        try {
          await limits.forOrders(res, claims, count);
        } catch (err) {
          throw asGraphQLError(err);
        }
      };
      return contextFor(claims, req.requestId, signer, chargeOrders);
    } catch (err) {
      throw asGraphQLError(err);
    }
  };
}

/** Internal listener (or the facade of the same process): the REST facade already authenticated the caller and signed its claims for the gateway. */
export function internalGatewayContext(verifier: InternalClaimsVerifier, signer: InternalClaimsSigner) {
  return async (call: GraphQLCall): Promise<GatewayContext> => {
    const header = call.headers[INTERNAL_CLAIMS_HEADER];
    const claims = await verifier.verify(typeof header === 'string' ? header : undefined);
    if (!claims) throw asGraphQLError(errors.unauthenticated('Missing or invalid internal claims'));
    return contextFor(claims, call.requestId, signer);
  };
}
