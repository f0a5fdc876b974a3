import { Pool } from 'undici';
import { INTERNAL_CLAIMS_HEADER, type Claims, type InternalClaimsSigner, type ServiceName } from '@trading/auth';
import { AppError, fromGraphQLError, isErrorCode, type ErrorCode } from '@trading/errors';
import { REQUEST_ID_HEADER } from '@trading/logging';
import { callWithin, type GraphQLEndpoint } from '@trading/service';

export interface InternalClientOptions {
  /** Keep-alive connections to the peer (default 16). */
  connections?: number;
  /** Headers and body must each arrive within this (default 5 s): a stuck peer never holds a caller for ever. */
  timeoutMs?: number;
  /** The code an unreachable or failing peer becomes (default SERVICE_UNAVAILABLE; an edge says BAD_GATEWAY). */
  unavailableCode?: 'SERVICE_UNAVAILABLE' | 'BAD_GATEWAY';
  /**
   * The peer's GraphQL when it runs in this process (the all-in-one): `graphql()` calls it with
   * the same signed headers instead of a socket; none (the peer stopped) is an unreachable peer.
   */
  inProcessGraphql?: () => GraphQLEndpoint | undefined;
}

interface GraphQLAnswer<T> {
  data?: T | null;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
}

export interface InternalRequest {
  /** Who the call is for, signed with the caller's own key and addressed to the peer. */
  claims: Claims;
  body?: unknown;
  query?: Record<string, string | undefined>;
  requestId?: string;
}

/**
 * A peer service's internal listener, called under this service's own identity. 2xx answers
 * come back parsed; a problem+json answer becomes the AppError it describes (same code, field
 * and message); an unreachable or confused peer becomes SERVICE_UNAVAILABLE naming the peer.
 */
export class InternalClient {
  private readonly pool: Pool;
  private readonly timeoutMs: number;
  private readonly unavailableCode: 'SERVICE_UNAVAILABLE' | 'BAD_GATEWAY';
  private readonly inProcessGraphql?: () => GraphQLEndpoint | undefined;

  constructor(
    baseUrl: string,
    private readonly audience: ServiceName,
    private readonly signer: InternalClaimsSigner,
    options: InternalClientOptions = {},
  ) {
    this.pool = new Pool(new URL(baseUrl).origin, { connections: options.connections ?? 16, keepAliveTimeout: 60_000 });
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.unavailableCode = options.unavailableCode ?? 'SERVICE_UNAVAILABLE';
    this.inProcessGraphql = options.inProcessGraphql;
  }

  /**
   * A GraphQL operation at `path`: its data, or the first GraphQL error as the AppError it
   * names (an internal error stays masked); no data at all is the peer failing.
   */
  async graphql<T>(
    path: string,
    document: string,
    variables: Record<string, unknown>,
    request: Omit<InternalRequest, 'body' | 'query'>,
  ): Promise<T> {
    const body = { query: document, variables };
    const answer = this.inProcessGraphql
      ? await this.callInProcess<GraphQLAnswer<T>>(this.inProcessGraphql(), { ...request, body })
      : await this.send<GraphQLAnswer<T>>('POST', path, { ...request, body }, true);
    if (answer?.errors?.length) throw fromGraphQLError(answer.errors[0]!);
    if (!answer?.data) throw this.unavailable(`The ${this.audience} service answered no data; try again`);
    return answer.data;
  }

  get<T>(path: string, request: InternalRequest): Promise<T> {
    return this.send<T>('GET', path, request);
  }

  post<T>(path: string, request: InternalRequest): Promise<T> {
    return this.send<T>('POST', path, request);
  }

  private unavailable(message: string): AppError {
    return new AppError(this.unavailableCode, message);
  }

  private async callInProcess<T>(endpoint: GraphQLEndpoint | undefined, request: InternalRequest): Promise<T | undefined> {
    if (!endpoint) throw this.unavailable(`The ${this.audience} service could not be reached; try again`);
    const headers = this.headers(await this.signer.signFor(request.claims, this.audience), request.requestId);
    let reply;
    try {
      reply = await callWithin(endpoint, { headers, body: request.body, requestId: request.requestId ?? '' }, this.timeoutMs);
    } catch {
      throw this.unavailable(`The ${this.audience} service did not answer; try again`);
    }
    try {
      return JSON.parse(reply.body) as T;
    } catch {
      throw this.unavailable(`The ${this.audience} service answered ${reply.status}; try again`);
    }
  }

  private headers(claimsHeader: string, requestId: string | undefined): Record<string, string> {
    return {
      'content-type': 'application/json',
      [INTERNAL_CLAIMS_HEADER]: claimsHeader,
      ...(requestId ? { [REQUEST_ID_HEADER]: requestId } : {}),
    };
  }

  /** `graphqlBody`: a GraphQL answer's body is read whatever the status (errors come with 4xx/5xx too). */
  private async send<T>(method: 'GET' | 'POST', path: string, request: InternalRequest, graphqlBody = false): Promise<T> {
    const query = Object.entries(request.query ?? {}).filter((e): e is [string, string] => e[1] !== undefined);
    const target = query.length ? `${path}?${new URLSearchParams(query).toString()}` : path;
    const { status, text } = await this.exchange(method, target, request);
    const body = this.parsed(status, text);
    if ((status >= 200 && status < 300) || (graphqlBody && body && typeof body === 'object' && ('data' in body || 'errors' in body)))
      return body as T;
    throw this.refusal(status, body);
  }

  /** The request signed and sent, and the peer's status and body text; no answer at all is the peer unreachable. */
  private async exchange(method: 'GET' | 'POST', target: string, request: InternalRequest): Promise<{ status: number; text: string }> {
    try {
      const res = await this.pool.request({
        method,
        path: target,
        headers: this.headers(await this.signer.signFor(request.claims, this.audience), request.requestId),
        body: method === 'POST' ? JSON.stringify(request.body ?? {}) : undefined,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      return { status: res.statusCode, text: await res.body.text() };
    } catch {
      throw this.unavailable(`The ${this.audience} service could not be reached; try again`);
    }
  }

  /** The body as JSON; undefined when empty, or when it is not JSON and the status is not a success anyway. */
  private parsed(status: number, text: string): any {
    try {
      return text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: a load balancer's or proxy's own page (its 503 when no instance is ready), never a peer's answer.
      if (status < 300) throw this.unavailable(`The ${this.audience} service answered something unreadable; try again`);
      return undefined;
    }
  }

  /** What a status other than success becomes for the caller. */
  private refusal(status: number, body: any): AppError {
    // The peer's own refusal (bad input, not found, conflict) is the caller's answer too.
    if (status < 500 && isErrorCode(body?.code)) {
      const { type: _t, title: _ti, status: _s, detail, code, requestId: _r, field, ...details } = body as Record<string, unknown>;
      return new AppError(code as ErrorCode, String(detail ?? 'refused'), {
        field: typeof field === 'string' ? field : undefined,
        details: Object.keys(details).length ? details : undefined,
      });
    }
    // The peer (or its load balancer) says it cannot serve for now: so it is for our caller too.
    if (status === 503) return new AppError('SERVICE_UNAVAILABLE', `The ${this.audience} service is briefly unavailable; try again`);
    return this.unavailable(`The ${this.audience} service answered ${status}; try again`);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
