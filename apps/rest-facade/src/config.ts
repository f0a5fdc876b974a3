import { commonSchema, field, loadConfig, z } from '@trading/config';

export const facadeConfigSchema = z.object({
  ...commonSchema,
  FACADE_PORT: field.port(8080),
  /** The gateway's GraphQL endpoint, where every REST call is translated to. */
  GATEWAY_URL: field.url().default('http://localhost:4000/graphql'),
  /** The auth app, to which /oauth/* and /pat/* are proxied. */
  AUTH_URL: field.url().default('http://localhost:8081'),
  AUTH_JWKS_URL: field.url().default('http://localhost:8081/.well-known/jwks.json'),
  AUTH_ISSUER: field.url().default('http://localhost:8081'),
  /** Proxies (load balancers) whose X-Forwarded-For is believed; Express `trust proxy` values. */
  FACADE_TRUST_PROXY: field.list(),
});

export type FacadeConfig = z.output<typeof facadeConfigSchema>;

export const loadFacadeConfig = (env: NodeJS.ProcessEnv = process.env): FacadeConfig => loadConfig('rest-facade', facadeConfigSchema, env);
