import { join } from 'node:path';
import { serviceIdentityFields } from '@trading/auth';
import { apiLimitSchema, edgeSessionSchema, commonSchema, field, loadConfig, z } from '@trading/config';

const gatewayConfigSchema = z.object({
  ...commonSchema,
  ...apiLimitSchema,
  ...edgeSessionSchema,
  ...serviceIdentityFields('gateway'),
  /** Public listener: /graphql for internal front-ends with a bearer token. */
  GATEWAY_PORT: field.port(4000),
  /** Internal listener: /graphql for the REST facade (signed claims), /metrics. */
  GATEWAY_INTERNAL_PORT: field.port(4100),
  /** The subgraphs' internal listeners. */
  ACCOUNTS_URL: field.url().default('http://localhost:4101/graphql'),
  BANKING_URL: field.url().default('http://localhost:4102/graphql'),
  OMS_URL: field.url().default('http://localhost:4103/graphql'),
  AUTH_JWKS_URL: field.url().default('http://localhost:8081/.well-known/jwks.json'),
  AUTH_ISSUER: field.url().default('http://localhost:8081'),
  /**
   * The public URL(s) of /graphql, comma-separated: DPoP proofs (RFC 9449) must name one of them
   * (`htu`); the Host header is never trusted for it.
   */
  GATEWAY_PUBLIC_URL: field.urls('http://localhost:4000/graphql'),
  /** The supergraph composed at build time (`npm run supergraph`). */
  SUPERGRAPH_PATH: z.string().default(join(__dirname, 'supergraph.graphql')),
  /** Proxies whose X-Forwarded-For is believed; Express `trust proxy` values. */
  GATEWAY_TRUST_PROXY: field.list(),
  /** Schema introspection and "did you mean" hints: for development only. */
  GRAPHQL_INTROSPECTION: z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]).default(false),
  /**
   * The GraphQL explorer (GraphiQL, served from this app, nothing from a CDN) at GET /graphql in a
   * browser, for internal front-end developers. Default: on, except with NODE_ENV=production.
   * Its schema browser and completion use introspection (GRAPHQL_INTROSPECTION).
   */
  GATEWAY_EXPLORER: z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]).optional(),
});

export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig => loadConfig('gateway', gatewayConfigSchema, env);

/** GATEWAY_EXPLORER as set, else on unless NODE_ENV=production (the image sets it: a deployment opts in). */
export const explorerEnabled = (config: Pick<GatewayConfig, 'GATEWAY_EXPLORER'>, env: NodeJS.ProcessEnv = process.env): boolean =>
  config.GATEWAY_EXPLORER ?? env['NODE_ENV'] !== 'production';
