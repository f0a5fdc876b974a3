import { Pool } from 'undici';
import { INTERNAL_CLAIMS_HEADER } from '@trading/auth';
import { AppError, fromGraphQLError } from '@trading/errors';
import { REQUEST_ID_HEADER } from '@trading/logging';

interface GraphQLResponse {
  data?: Record<string, unknown> | null;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
}

/** Sends operations to the gateway over a keep-alive pool; GraphQL errors come back as AppErrors. */
export class GatewayClient {
  private readonly pool: Pool;
  private readonly path: string;

  constructor(gatewayUrl: string) {
    const url = new URL(gatewayUrl);
    this.pool = new Pool(url.origin, { connections: 64, keepAliveTimeout: 60_000 });
    this.path = url.pathname;
  }

  async execute(document: string, variables: Record<string, unknown>, internalClaims: string, requestId: string): Promise<Record<string, unknown>> {
    let body: GraphQLResponse;
    try {
      const res = await this.pool.request({
        method: 'POST',
        path: this.path,
        headers: { 'content-type': 'application/json', [INTERNAL_CLAIMS_HEADER]: internalClaims, [REQUEST_ID_HEADER]: requestId },
        body: JSON.stringify({ query: document, variables }),
      });
      body = (await res.body.json()) as GraphQLResponse;
    } catch {
      throw new AppError('BAD_GATEWAY', 'The API gateway could not be reached');
    }
    // The first error decides the status; partial data is not served over REST.
    if (body.errors?.length) throw fromGraphQLError(body.errors[0]!);
    if (!body.data) throw new AppError('BAD_GATEWAY', 'The API gateway returned no data');
    return body.data;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
