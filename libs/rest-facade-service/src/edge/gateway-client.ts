import type { Claims, InternalClaimsSigner } from '@trading/auth';
import { InternalClient } from '@trading/internal-http';
import type { GraphQLEndpoint } from '@trading/service';

/**
 * The gateway as the facade calls it: one GraphQL operation per REST call, under the caller's
 * claims signed for the gateway, over a keep-alive pool. GraphQL errors come back as the
 * AppErrors they name (internal ones masked); a gateway that cannot be reached, or answers no
 * data, is a 502.
 */
export class GatewayClient {
  private readonly client: InternalClient;
  private readonly path: string;

  /** `inProcess`: the gateway of this process (the all-in-one), called with the same signed claims instead of over a socket. */
  constructor(gatewayUrl: string, signer: InternalClaimsSigner, inProcess?: () => GraphQLEndpoint | undefined) {
    this.client = new InternalClient(gatewayUrl, 'gateway', signer, {
      connections: 64,
      timeoutMs: 30_000,
      unavailableCode: 'BAD_GATEWAY',
      inProcessGraphql: inProcess,
    });
    this.path = new URL(gatewayUrl).pathname;
  }

  execute(document: string, variables: Record<string, unknown>, claims: Claims, requestId: string): Promise<Record<string, unknown>> {
    return this.client.graphql(this.path, document, variables, { claims, requestId });
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
