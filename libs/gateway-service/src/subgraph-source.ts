import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { Agent, fetch as undiciFetch } from 'undici';
import { INTERNAL_CLAIMS_HEADER, type ServiceName } from '@trading/auth';
import { REQUEST_ID_HEADER } from '@trading/logging';
import type { GatewayContext } from './context';

/**
 * One keep-alive connection pool per gateway for all its subgraph calls (measured ≈1.7× the
 * stock fetcher here); each gateway owns and closes its own, so a second gateway in the
 * process (tests, a rolling restart in one process) never loses its pool to the first.
 */
export function subgraphConnections(): { fetcher: RemoteGraphQLDataSource['fetcher']; close(): Promise<void> } {
  const keepAlive = new Agent({ keepAliveTimeout: 60_000, connections: 64, pipelining: 1 });
  return {
    fetcher: ((url: string, init: object) =>
      undiciFetch(url, { ...init, dispatcher: keepAlive })) as unknown as RemoteGraphQLDataSource['fetcher'],
    close: () => keepAlive.close(),
  };
}

/** Sends the caller's claims, signed for this subgraph alone, and the request id. */
export class SubgraphSource extends RemoteGraphQLDataSource<GatewayContext> {
  constructor(
    private readonly subgraph: ServiceName,
    url: string,
    fetcher: RemoteGraphQLDataSource['fetcher'],
  ) {
    super({ url, fetcher });
  }

  override async willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>): Promise<void> {
    if (!('claimsFor' in context) || !request.http) return;
    request.http.headers.set(INTERNAL_CLAIMS_HEADER, await context.claimsFor(this.subgraph));
    request.http.headers.set(REQUEST_ID_HEADER, context.requestId);
  }
}
