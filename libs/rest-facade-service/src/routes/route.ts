import type { Request } from 'express';
import type { Scope } from '@trading/auth';

/**
 * One REST endpoint as data: the facade translates it into a gateway operation. A new
 * endpoint is an entry here plus resolvers in its subgraph.
 */
export interface RestRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Express path under /v1, exactly as the spec lists it. */
  path: string;
  /** Checked here for a clear 403 before any GraphQL runs; the subgraph enforces them again. */
  scopes: Scope[];
  /** The GraphQL operation sent to the gateway. */
  document: string;
  /** Request → GraphQL variables (validate here and throw AppError naming the field). */
  variables?: (req: Request) => Record<string, unknown>;
  /** GraphQL data → response body. */
  shape: (data: any, req: Request) => unknown;
  /** Success status (default 200). */
  status?: number;
  /** Places an order: charged to the order budgets by the handler itself, so every path spelling Express routes here pays. */
  placesOrder?: boolean;
}
