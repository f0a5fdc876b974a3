import { join } from 'node:path';
import { commonSchema, field, loadConfig, z } from '@trading/config';

export const gatewayConfigSchema = z.object({
  ...commonSchema,
  GATEWAY_PORT: field.port(4000),
  ACCOUNTS_URL: field.url().default('http://localhost:4001/graphql'),
  BANKING_URL: field.url().default('http://localhost:4002/graphql'),
  OMS_URL: field.url().default('http://localhost:4003/graphql'),
  AUTH_JWKS_URL: field.url().default('http://localhost:8081/.well-known/jwks.json'),
  AUTH_ISSUER: field.url().default('http://localhost:8081'),
  /** The supergraph composed at build time (`npm run supergraph`). */
  SUPERGRAPH_PATH: z.string().default(join(__dirname, 'supergraph.graphql')),
  /** Proxies whose X-Forwarded-For is believed; Express `trust proxy` values. */
  GATEWAY_TRUST_PROXY: field.list(),
});

export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig => loadConfig('gateway', gatewayConfigSchema, env);
