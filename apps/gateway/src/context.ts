import type { Request } from 'express';
import { GraphQLError } from 'graphql';
import { INTERNAL_CLAIMS_HEADER, type EdgeAuthenticator, type InternalClaimsCodec } from '@trading/auth';
import { AppError, wwwAuthenticate } from '@trading/errors';

export interface GatewayContext {
  /** The signed claims header, forwarded unchanged to every subgraph. */
  internalClaims: string;
  requestId: string;
}

/**
 * Authenticates a GraphQL request once, at the gateway: either the facade already did it (a
 * valid signed claims header), or the caller is an internal front-end with a bearer token.
 */
export function gatewayContext(edge: EdgeAuthenticator, codec: InternalClaimsCodec) {
  return async ({ req }: { req: Request }): Promise<GatewayContext> => {
    const forwarded = req.get(INTERNAL_CLAIMS_HEADER);
    if (forwarded && (await codec.verify(forwarded))) return { internalClaims: forwarded, requestId: req.requestId };
    try {
      const claims = await edge.authenticate(req.get('authorization'), req.ip);
      return { internalClaims: await codec.sign(claims), requestId: req.requestId };
    } catch (err) {
      const appError = err instanceof AppError ? err : new AppError('INTERNAL_SERVER_ERROR', 'Authentication failed unexpectedly');
      const headers = new Map<string, string>();
      const challenge = wwwAuthenticate(appError);
      if (challenge) headers.set('www-authenticate', challenge);
      throw new GraphQLError(appError.message, { extensions: { code: appError.code, http: { status: appError.status, headers } } });
    }
  };
}
