import { GraphQLError } from 'graphql';

/**
 * Stable error codes: the same string is the GraphQL `extensions.code` and the problem+json
 * `code`, and this table is the one place that maps each to an HTTP status.
 */
export const ERROR_STATUS = {
  BAD_USER_INPUT: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  GRAPHQL_PARSE_FAILED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  INSUFFICIENT_SCOPE: 403,
  READ_ONLY_TOKEN: 403,
  PAT_SESSION_REQUIRED: 403,
  IP_NOT_ALLOWED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE: 422,
  PAT_LIMIT_REACHED: 422,
  RATE_LIMITED: 429,
  INTERNAL_SERVER_ERROR: 500,
  BAD_GATEWAY: 502,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const TITLES: Record<ErrorCode, string> = {
  BAD_USER_INPUT: 'Bad request',
  GRAPHQL_VALIDATION_FAILED: 'Invalid GraphQL operation',
  GRAPHQL_PARSE_FAILED: 'Invalid GraphQL syntax',
  UNAUTHENTICATED: 'Authentication required',
  FORBIDDEN: 'Forbidden',
  INSUFFICIENT_SCOPE: 'Insufficient scope',
  READ_ONLY_TOKEN: 'Read-only token',
  PAT_SESSION_REQUIRED: 'Personal access token required',
  IP_NOT_ALLOWED: 'Client address not allowed',
  NOT_FOUND: 'Not found',
  METHOD_NOT_ALLOWED: 'Method not allowed',
  CONFLICT: 'Conflict',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported media type',
  UNPROCESSABLE: 'Unprocessable request',
  PAT_LIMIT_REACHED: 'Too many personal access tokens',
  RATE_LIMITED: 'Too many requests',
  INTERNAL_SERVER_ERROR: 'Internal server error',
  BAD_GATEWAY: 'Upstream error',
  SERVICE_UNAVAILABLE: 'Service unavailable',
};

export function statusForCode(code: string | undefined): number {
  return code && code in ERROR_STATUS ? ERROR_STATUS[code as ErrorCode] : 500;
}

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && code in ERROR_STATUS;
}

export interface AppErrorOptions {
  /** The request field at fault (`body.amount`, `query.cursor`, `path.accountId`). */
  field?: string;
  /** Extra, client-safe details. */
  details?: Record<string, unknown>;
  /** For 401/403: what the token lacked, for the WWW-Authenticate header. */
  requiredScopes?: string[];
  /** For 401: the request carried no credentials at all (RFC 6750 §3.1: then no error code). */
  noCredentials?: boolean;
  /** For 401: the whole `WWW-Authenticate` challenge when it is not a Bearer one (DPoP, RFC 9449 §7.1). */
  challenge?: string;
}

/** The one error type services throw on purpose; its message is safe to show to the caller. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: AppErrorOptions = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }

  get field(): string | undefined {
    return this.options.field;
  }
}

export const errors = {
  badInput: (field: string, message: string) => new AppError('BAD_USER_INPUT', message, { field }),
  unprocessable: (field: string, message: string) => new AppError('UNPROCESSABLE', message, { field }),
  unauthenticated: (message = 'A valid bearer token is required') => new AppError('UNAUTHENTICATED', message),
  insufficientScope: (required: string[]) =>
    new AppError('INSUFFICIENT_SCOPE', `This operation needs scope ${required.join(' ')}`, { requiredScopes: required }),
  notFound: (what: string, field?: string) => new AppError('NOT_FOUND', `${what} not found`, { field }),
  conflict: (message: string) => new AppError('CONFLICT', message),
  unavailable: (message: string) => new AppError('SERVICE_UNAVAILABLE', message),
};

/** RFC 9457 problem details, with our stable `code`, the request id and the field at fault. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId?: string;
  field?: string;
  [extra: string]: unknown;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
/**
 * Where a problem's `type` points: `<auth's public origin>/problems/<code>`, a short page per
 * stable code that the platform serves itself. The services that answer people or
 * API clients (auth, the REST facade, the gateway) set it from their AUTH_ISSUER at start; the
 * default is auth's default address.
 */
let problemTypeBase = 'http://localhost:8081/problems/';

/** `origin` is auth's public address ({login_url}, AUTH_ISSUER). */
export function configureProblemTypes(origin: string): void {
  problemTypeBase = `${origin.replace(/\/+$/, '')}/problems/`;
}

/** The `type` URL of a code (`BAD_USER_INPUT`) or its slug (`bad-user-input`): `…/problems/bad-user-input`. */
export const problemTypeUrl = (code: string) =>
  problemTypeBase + (/^[A-Za-z_-]{1,40}$/.test(code) ? code.toLowerCase().replace(/_/g, '-') : 'not-found');

export function problem(
  code: ErrorCode | string,
  detail: string,
  extra: { requestId?: string; field?: string; status?: number; details?: Record<string, unknown> } = {},
): Problem {
  const known = isErrorCode(code) ? code : 'INTERNAL_SERVER_ERROR';
  const body: Problem = {
    type: problemTypeUrl(known),
    title: TITLES[known],
    status: extra.status ?? ERROR_STATUS[known],
    detail,
    code: known,
  };
  if (extra.field) body.field = extra.field;
  if (extra.details) Object.assign(body, extra.details);
  if (extra.requestId) body.requestId = extra.requestId;
  return body;
}

/**
 * PostgreSQL's "not now" answers (SQLSTATE): serialization failure, deadlock, lock wait timed
 * out, statement cancelled, the server shutting down, restarting or full, our idle transaction
 * ended. Class 08 (connection exceptions) is matched by prefix.
 */
const TRANSIENT_SQLSTATES = new Set(['40001', '40P01', '55P03', '57014', '57P01', '57P02', '57P03', '53300', '25P03']);
const TRANSIENT_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);
/** node-postgres and its pool say these in words only (no code). */
const TRANSIENT_MESSAGES = /^(timeout exceeded when trying to connect|Connection terminated)/;
/** TypeORM's word for a transaction whose connection the server ended under it (its error released the connection). */
const TRANSIENT_ERROR_NAMES = new Set(['QueryRunnerProviderAlreadyReleasedError', 'QueryRunnerAlreadyReleasedError']);

/**
 * A dependency said "not now" rather than "never": the database restarting, refusing
 * connections or ending a lock wait, a deadlock, a reset socket, a pool with no connection
 * free. The request's transaction rolled back, so sending it again is safe (money-moving POSTs
 * with their Idempotency-Key): it is answered 503 SERVICE_UNAVAILABLE, not a 500 that sends the
 * caller to support.
 */
export function isTransientFailure(err: unknown): boolean {
  if (err instanceof AppError || typeof err !== 'object' || err === null) return false;
  const { message, name } = err as { message?: unknown; name?: unknown };
  if (TRANSIENT_ERROR_NAMES.has(String(name))) return true;
  const sqlstate = sqlstateOf(err);
  if (TRANSIENT_SQLSTATES.has(sqlstate) || /^08[0-9A-Z]{3}$/.test(sqlstate) || TRANSIENT_SOCKET_CODES.has(sqlstate)) return true;
  return typeof message === 'string' && TRANSIENT_MESSAGES.test(message);
}

/**
 * The error code of a failed database call (a SQLSTATE, or a socket's code), whichever way it
 * came: TypeORM wraps pg's error (`driverError`), a statement sent to pg directly does not.
 */
export function sqlstateOf(err: unknown): string {
  if (typeof err !== 'object' || err === null) return '';
  const { code, driverError } = err as { code?: unknown; driverError?: { code?: unknown } };
  return String(code ?? driverError?.code ?? '');
}

export const TRANSIENT_FAILURE_MESSAGE = 'A service this request needs is briefly unavailable; nothing was changed, try again shortly';

/** Any thrown value as a problem: AppErrors keep their message; a transient failure is a 503; anything else is masked. */
export function problemFromError(err: unknown, requestId?: string): Problem {
  if (err instanceof AppError) {
    return problem(err.code, err.message, { requestId, field: err.field, details: err.options.details });
  }
  if (isTransientFailure(err)) return problem('SERVICE_UNAVAILABLE', TRANSIENT_FAILURE_MESSAGE, { requestId });
  return problem('INTERNAL_SERVER_ERROR', 'An unexpected error occurred; quote the requestId when contacting support', { requestId });
}

/**
 * `WWW-Authenticate` for 401 and every bearer-related 403 (RFC 6750 §3): missing scope, a
 * READ_ONLY token writing (it lacks the write scope), a PAT used from an address its allowlist
 * does not hold or where only a PAT session will do (the token is unusable here: invalid_token).
 */
export function wwwAuthenticate(err: AppError): string | undefined {
  if (err.options.challenge) return err.options.challenge;
  const description = `error_description="${err.message.replace(/"/g, "'")}"`;
  switch (err.code) {
    case 'UNAUTHENTICATED':
      return err.options.noCredentials ? 'Bearer realm="trading-api"' : `Bearer realm="trading-api", error="invalid_token", ${description}`;
    case 'INSUFFICIENT_SCOPE':
      return `Bearer realm="trading-api", error="insufficient_scope", scope="${(err.options.requiredScopes ?? []).join(' ')}"`;
    case 'READ_ONLY_TOKEN':
      return `Bearer realm="trading-api", error="insufficient_scope", ${description}`;
    case 'IP_NOT_ALLOWED':
    case 'PAT_SESSION_REQUIRED':
      return `Bearer realm="trading-api", error="invalid_token", ${description}`;
    default:
      return undefined;
  }
}

/** An AppError as a GraphQL error, carrying the code (and field) in `extensions`. */
export function toGraphQLError(err: AppError): GraphQLError {
  return new GraphQLError(err.message, {
    extensions: {
      code: err.code,
      ...(err.field ? { field: err.field } : {}),
      ...(err.options.requiredScopes ? { requiredScopes: err.options.requiredScopes } : {}),
    },
  });
}

/** Rebuilds an AppError from a GraphQL error's extensions (the facade's side of the mapping). */
export function fromGraphQLError(e: { message: string; extensions?: Record<string, unknown> }): AppError {
  const code = e.extensions?.['code'];
  const field = typeof e.extensions?.['field'] === 'string' ? (e.extensions['field'] as string) : undefined;
  const requiredScopes = Array.isArray(e.extensions?.['requiredScopes']) ? (e.extensions['requiredScopes'] as string[]) : undefined;
  if (isErrorCode(code) && code !== 'INTERNAL_SERVER_ERROR') return new AppError(code, e.message, { field, requiredScopes });
  return new AppError('INTERNAL_SERVER_ERROR', 'An unexpected error occurred');
}
export * from './ids';
export * from './text';
