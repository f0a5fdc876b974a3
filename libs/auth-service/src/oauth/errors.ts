import type { ErrorRequestHandler, Response } from 'express';
import { isTransientFailure } from '@trading/errors';
import { RETRY_AFTER_UNAVAILABLE_S } from '@trading/service';

/** RFC 6749 §5.2 (token endpoint), RFC 6750 §3.1 (userinfo), RFC 7009 §2.2.1 (revocation) error codes. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'access_denied'
  | 'invalid_scope'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'unsupported_token_type'
  | 'too_many_requests'
  | 'temporarily_unavailable'
  | 'server_error'
  // RFC 9449 §5, §8
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce';

/** The OAuth error name, status and description are decided where the error is thrown. */
export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

export const oauthErrors = {
  invalidRequest: (d: string) => new OAuthError('invalid_request', d),
  /** 401 with a challenge for the scheme the client tried (RFC 6749 §5.2). */
  invalidClient: (d = 'Client authentication failed') =>
    new OAuthError('invalid_client', d, 401, { 'WWW-Authenticate': 'Basic realm="trading-api", charset="UTF-8"' }),
  invalidGrant: (d: string) => new OAuthError('invalid_grant', d),
  unauthorizedClient: (d: string) => new OAuthError('unauthorized_client', d),
  unsupportedGrantType: (d: string) => new OAuthError('unsupported_grant_type', d),
  invalidScope: (d: string) => new OAuthError('invalid_scope', d),
  invalidDpopProof: (d: string) => new OAuthError('invalid_dpop_proof', d),
  /** RFC 9449 §8: try again with this nonce in the proof. */
  useDpopNonce: (d: string, nonce: string) => new OAuthError('use_dpop_nonce', d, 400, { 'DPoP-Nonce': nonce }),
};

/** No caching of anything carrying tokens (RFC 6749 §5.1). */
export function noStore(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
}

/**
 * The OAuth endpoints answer `{ error, error_description }` (RFC 6749), not problem+json:
 * their own errors, body-parser failures, a dependency's "not now" (temporarily_unavailable, 503:
 * nothing was spent, the client retries) and anything unexpected (masked as server_error).
 */
export function oauthErrorHandler(onUnexpected: (err: unknown) => void): ErrorRequestHandler {
  return (err, _req, res, next) => {
    if (res.headersSent) return next(err);
    noStore(res);
    const parse = err as { type?: string; status?: number };
    let e: OAuthError;
    if (err instanceof OAuthError) e = err;
    else if (parse?.type === 'entity.parse.failed') e = oauthErrors.invalidRequest('The request body is not valid JSON');
    else if (parse?.type === 'entity.too.large') e = oauthErrors.invalidRequest('The request body is too large');
    else if ((err as { status?: number })?.status === 503 || isTransientFailure(err))
      e = new OAuthError('temporarily_unavailable', 'The service is temporarily unavailable; retry shortly', 503, {
        'Retry-After': String(RETRY_AFTER_UNAVAILABLE_S),
      });
    else {
      onUnexpected(err);
      e = new OAuthError('server_error', 'An unexpected error occurred', 500);
    }
    res.set(e.headers).status(e.status).json({ error: e.error, error_description: e.description });
  };
}
