import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { GraphQLError } from 'graphql';
import { Agent } from 'undici';
import { INTERNAL_CLAIMS_HEADER, type ServiceName } from '@trading/auth';
import { REQUEST_ID_HEADER } from '@trading/logging';
import { callWithin, type GraphQLCall, type GraphQLEndpoint } from '@trading/service';
import type { GatewayContext } from './context';

/** A subgraph's answer: status and JSON text. */
interface SubgraphReply {
  status: number;
  body: string;
}

/** How a call reaches one subgraph: over HTTP to its internal listener, or in process (the all-in-one). */
export type SubgraphTransport = (call: GraphQLCall) => Promise<SubgraphReply>;

/** A subgraph that does not answer within this is failing: the caller gets an error, not a hung request. */
const SUBGRAPH_TIMEOUT_MS = 30_000;

/**
 * One keep-alive connection pool per gateway for all its subgraph calls; each gateway owns and
 * closes its own, so a second gateway in the process (tests, a rolling restart in one process)
 * never loses its pool to the first. Calls go out with undici's `request()`: fetch builds a
 * WHATWG Response with web streams per call, which measured about a third of the gateway's CPU.
 */
export function subgraphConnections(): { over(url: string): SubgraphTransport; close(): Promise<void> } {
  const pool = new Agent({ keepAliveTimeout: 60_000, connections: 64, pipelining: 1 });
  return {
    over: (url) => {
      const { origin, pathname } = new URL(url);
      return async (call) => {
        const res = await pool.request({
          origin,
          path: pathname,
          method: 'POST',
          headers: call.headers,
          body: JSON.stringify(call.body),
          headersTimeout: SUBGRAPH_TIMEOUT_MS,
          bodyTimeout: SUBGRAPH_TIMEOUT_MS,
        });
        return { status: res.statusCode, body: await res.body.text() };
      };
    },
    close: () => pool.close(),
  };
}

/** A subgraph of this process, through its endpoint; none (stopped, crashed) fails the call as a refused connection would. */
export function inProcess(subgraph: ServiceName, endpoint: () => GraphQLEndpoint | undefined): SubgraphTransport {
  return (call) => {
    const current = endpoint();
    if (!current) return Promise.reject(new Error(`${subgraph} is not running`));
    return callWithin(current, call, SUBGRAPH_TIMEOUT_MS);
  };
}

/**
 * The gateway's way to one subgraph: sends the caller's claims, signed for this subgraph alone,
 * and the request id. Written out rather than extending RemoteGraphQLDataSource, which builds a
 * node-fetch Request and Headers per call that nothing here reads.
 */
export class SubgraphSource implements GraphQLDataSource<GatewayContext> {
  constructor(
    private readonly subgraph: ServiceName,
    private readonly transport: SubgraphTransport,
  ) {}

  async process({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>) {
    if (!request.query) throw new Error('Missing query');
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    let requestId = '';
    if ('claimsFor' in context) {
      headers[INTERNAL_CLAIMS_HEADER] = await (context as GatewayContext).claimsFor(this.subgraph);
      headers[REQUEST_ID_HEADER] = requestId = (context as GatewayContext).requestId;
    }
    const reply = await this.transport({ headers, body: requestBody(request), requestId });
    return answerOf(reply);
  }
}

/** What JSON would carry: no key for an absent field (Apollo refuses `extensions: undefined` in process). */
function requestBody(request: GraphQLDataSourceProcessOptions<GatewayContext>['request']): Record<string, unknown> {
  const { query, variables, operationName, extensions } = request;
  const body: Record<string, unknown> = { query };
  if (variables) body['variables'] = variables;
  if (operationName) body['operationName'] = operationName;
  if (extensions) body['extensions'] = extensions;
  return body;
}

/** The subgraph's answer as the gateway takes it: its GraphQL result, or an error carrying what it said. */
function answerOf(reply: SubgraphReply): GatewayResponse {
  let answer: unknown;
  try {
    answer = JSON.parse(reply.body);
  } catch {
    answer = reply.body;
  }
  // A 400 with GraphQL errors is the subgraph refusing the operation's input (a variable not
  // in its scalar's syntax): its errors, which name the field, are the answer.
  if (reply.status === 400 && isGraphQLErrorAnswer(answer)) return answer as GatewayResponse;
  // As Apollo's RemoteGraphQLDataSource: a refusal of the whole call is an error with the subgraph's answer attached (the gateway masks it).
  if (reply.status < 200 || reply.status >= 300) {
    const code = reply.status === 401 ? 'UNAUTHENTICATED' : reply.status === 403 ? 'FORBIDDEN' : undefined;
    throw new GraphQLError(`${reply.status}: `, {
      extensions: { response: { status: reply.status, body: answer }, ...(code ? { code } : {}) },
    });
  }
  if (typeof answer !== 'object' || answer === null) throw new Error(`Expected JSON response body, but received: ${reply.body}`);
  return answer as GatewayResponse;
}

type GatewayResponse = Awaited<ReturnType<GraphQLDataSource['process']>>;

const isGraphQLErrorAnswer = (answer: unknown): boolean =>
  typeof answer === 'object' && answer !== null && Array.isArray((answer as { errors?: unknown }).errors);
