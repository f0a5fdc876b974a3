import type { GraphQLFormattedError } from 'graphql';
import { isErrorCode } from '@trading/errors';

/**
 * Apollo's own answers to a request the client got wrong, worded for the client: a persisted-query
 * hash it does not hold (the cue to send the text, standard APQ), a request with no operation, or an
 * `operationName` the document does not define. Masking them would turn a client's mistake into
 * "Internal server error".
 */
const REQUEST_LEVEL_CODES = new Set([
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
]);

/**
 * What leaves the gateway: the code (and the field at fault) of deliberate errors; never a
 * subgraph's URL, service name or stack. Unknown failures become a generic internal error.
 */
export function maskError(formatted: GraphQLFormattedError): GraphQLFormattedError {
  const ext = formatted.extensions ?? {};
  const code = ext['code'];
  // A request-level answer of Apollo's (no path: not from a subgraph), worded by Apollo.
  if (typeof code === 'string' && REQUEST_LEVEL_CODES.has(code) && !formatted.path)
    return { message: formatted.message, extensions: { code } };
  if (isErrorCode(code) && code !== 'INTERNAL_SERVER_ERROR' && code !== 'BAD_GATEWAY' && code !== 'SERVICE_UNAVAILABLE') {
    const kept: Record<string, unknown> = { code };
    if (typeof ext['field'] === 'string') kept['field'] = ext['field'];
    if (Array.isArray(ext['requiredScopes'])) kept['requiredScopes'] = ext['requiredScopes'];
    return { message: formatted.message, path: formatted.path, locations: formatted.locations, extensions: kept };
  }
  if (code === 'SERVICE_UNAVAILABLE' || subgraphUnavailable(formatted))
    return { message: 'A service is temporarily unavailable', path: formatted.path, extensions: { code: 'SERVICE_UNAVAILABLE' } };
  return { message: 'Internal server error', path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}

/**
 * A subgraph that could not be reached, or whose load balancer answered that no instance is ready
 * (502, 503, 504: every instance restarting, or waiting for Redis or PostgreSQL to come back). The
 * request did nothing there, so the caller may send it again: a 503 with Retry-After, not a 500.
 */
function subgraphUnavailable(formatted: GraphQLFormattedError): boolean {
  const status = (formatted.extensions?.['response'] as { status?: unknown } | undefined)?.status;
  if (status === 502 || status === 503 || status === 504) return true;
  return /\b(ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ETIMEDOUT)\b/.test(formatted.message);
}
