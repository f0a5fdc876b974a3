/**
 * A GraphQL endpoint other services call (a subgraph, the gateway's internal listener), as one
 * function: the same code answers a call over HTTP and, in the all-in-one, a call from another
 * app of the same process, so both pass the same context (internal claims verified), limits and
 * error masking.
 */
import { HeaderMap, type ApolloServer, type BaseContext } from '@apollo/server';
import type { RequestHandler } from 'express';

export interface GraphQLCall {
  /** Lower-case header names; the internal claims header among them. */
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body: `{ query, variables, operationName }`. */
  body: unknown;
  requestId: string;
}

export interface GraphQLReply {
  status: number;
  headers: Map<string, string>;
  /** The JSON answer, as Apollo wrote it. */
  body: string;
}

export type GraphQLEndpoint = (call: GraphQLCall) => Promise<GraphQLReply>;

/** Apollo refuses a POST that is not declared JSON (its CSRF rule); an in-process call has no other content type. */
const JSON_CONTENT = 'application/json';

export function graphqlEndpoint<C extends BaseContext>(
  server: ApolloServer<C>,
  context: (call: GraphQLCall) => Promise<C>,
): GraphQLEndpoint {
  return async (call) => {
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(call.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    if (!headers.has('content-type')) headers.set('content-type', JSON_CONTENT);
    const answer = await server.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: 'POST', headers, search: '', body: call.body },
      context: () => context(call),
    });
    // Only incremental delivery (@defer/@stream) answers in chunks; no operation of ours asks for it.
    let body: string;
    if (answer.body.kind === 'complete') body = answer.body.string;
    else {
      body = '';
      for await (const chunk of answer.body.asyncIterator) body += chunk;
    }
    return { status: answer.status ?? 200, headers: answer.headers, body };
  };
}

/**
 * A call to a peer of the same process, bounded as a call over a socket is: a peer stuck (on a
 * lock, a dependency) fails the caller after `ms` instead of holding it for ever.
 */
export function callWithin(endpoint: GraphQLEndpoint, call: GraphQLCall, ms: number): Promise<GraphQLReply> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([endpoint(call), timedOut]).finally(() => clearTimeout(timer));
}

/** Serves an endpoint over HTTP (after `express.json()`): what `@as-integrations/express5` did, minus the ETag of every answer. */
export function serveGraphQL(endpoint: GraphQLEndpoint): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'POST') return next();
    endpoint({ headers: req.headers, body: req.body, requestId: req.requestId }).then((reply) => {
      for (const [name, value] of reply.headers) res.setHeader(name, value);
      res.statusCode = reply.status;
      res.end(reply.body);
    }, next);
  };
}
