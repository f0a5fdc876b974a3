import type { GraphQLFormattedError } from 'graphql';
import { AppError, isErrorCode, isTransientFailure, toGraphQLError, TRANSIENT_FAILURE_MESSAGE } from '@trading/errors';
import type { Logger } from '@trading/logging';

/**
 * Keeps AppErrors' codes and messages; a dependency's "not now" becomes SERVICE_UNAVAILABLE (the
 * caller may retry); masks everything else so no internals leave the subgraph.
 */
export function formatSubgraphError(formatted: GraphQLFormattedError, error: unknown, logger: Logger): GraphQLFormattedError {
  const original = (error as { originalError?: unknown })?.originalError;
  if (original instanceof AppError) {
    const { message, extensions } = toGraphQLError(original);
    return { message, path: formatted.path, locations: formatted.locations, extensions };
  }
  const code = formatted.extensions?.['code'];
  if (isErrorCode(code) && code !== 'INTERNAL_SERVER_ERROR') {
    const field = code === 'BAD_USER_INPUT' ? variableFieldAtFault(formatted.message) : undefined;
    return { ...formatted, extensions: field ? { code, field } : { code } };
  }
  if (isTransientFailure(original)) {
    logger.warn({ err: original }, 'resolver failed on a dependency that is briefly unavailable; answered SERVICE_UNAVAILABLE');
    return { message: TRANSIENT_FAILURE_MESSAGE, path: formatted.path, extensions: { code: 'SERVICE_UNAVAILABLE' } };
  }
  logger.error({ err: original ?? error }, 'unexpected resolver error');
  return { message: 'Internal server error', path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}

/**
 * The input field a variable failed on, named as the domain's own errors name it: graphql-js
 * writes `Variable "$input" got invalid value "x" at "input.amount"; …` ("amount"), or without
 * the `at` part when the variable itself is the value ("$amount": "amount").
 */
export function variableFieldAtFault(message: string): string | undefined {
  const match = /^Variable "\$([A-Za-z_][\w]*)" got invalid value .*?(?: at "\1[.]?([^"]+)")?; /s.exec(message);
  if (!match) return undefined;
  return match[2] ?? match[1];
}
