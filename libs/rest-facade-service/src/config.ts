import { serviceIdentityFields } from '@trading/auth';
import { apiLimitSchema, edgeSessionSchema, commonSchema, field, loadConfig, z } from '@trading/config';

export const facadeConfigSchema = z.object({
  ...commonSchema,
  ...apiLimitSchema,
  ...edgeSessionSchema,
  ...serviceIdentityFields('rest-facade'),
  /** Public listener: /v1 and the API docs. */
  FACADE_PORT: field.port(8080),
  /** Internal listener: /metrics and a detailed /readyz. */
  FACADE_INTERNAL_PORT: field.port(8180),
  /** The gateway's internal GraphQL endpoint, where every REST call is translated to (with signed claims). */
  GATEWAY_URL: field.url().default('http://localhost:4100/graphql'),
  /** The auth app's internal listener: /v1/oauth/* and /v1/pat/* are proxied there (with the signed client address and, for a signed-in caller, claims). */
  AUTH_INTERNAL_URL: field.url().default('http://localhost:8181'),
  AUTH_JWKS_URL: field.url().default('http://localhost:8081/.well-known/jwks.json'),
  AUTH_ISSUER: field.url().default('http://localhost:8081'),
  /** The OMS's settlement stream: live order events (GET /v1/oms/{accountId}/events) are read from it. */
  EVENTS_STREAM: z.string().min(1).default('trading:oms:events'),
  /** An event stream's heartbeat; the caller's session is checked again at each one. */
  ORDER_EVENTS_HEARTBEAT_MS: z.coerce.number().int().min(50).max(60_000).default(15_000),
  /** Open event streams per user on one facade instance. */
  ORDER_EVENTS_MAX_STREAMS_PER_USER: z.coerce.number().int().positive().default(5),
  /** Proxies (load balancers) whose X-Forwarded-For is believed; Express `trust proxy` values. */
  FACADE_TRUST_PROXY: field.list(),
});

export type FacadeConfig = z.output<typeof facadeConfigSchema>;

export const loadFacadeConfig = (env: NodeJS.ProcessEnv = process.env): FacadeConfig => loadConfig('rest-facade', facadeConfigSchema, env);
