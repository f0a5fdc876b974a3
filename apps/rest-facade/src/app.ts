import { ACCESS_TOKEN_AUDIENCE, createAccessTokenVerifier, EdgeAuthenticator, InternalClaimsCodec, SessionStore } from '@trading/auth';
import { createLogger, type Logger } from '@trading/logging';
import { connectStore, type KeyValueStore } from '@trading/redis';
import { createService, finishService, type ServiceApp } from '@trading/service';
import type { FacadeConfig } from './config';
import { authenticate } from './edge/authenticate';
import { GatewayClient } from './edge/gateway-client';
import { routeTableRouter } from './edge/route-handler';
import { authProxy } from './proxy/auth-proxy';
import { docsRouter } from './openapi/docs';
import { ROUTES } from './routes';

export { loadFacadeConfig, type FacadeConfig } from './config';
export { openApiDocument } from './openapi/openapi';

export const BASE_PATH = '/v1';

export async function createRestFacadeApp(config: FacadeConfig, deps: { logger?: Logger; store?: KeyValueStore } = {}): Promise<ServiceApp> {
  const logger = deps.logger ?? createLogger('rest-facade', config.LOG_LEVEL);
  const store = deps.store ?? (await connectStore(config.REDIS_URL));
  const edge = new EdgeAuthenticator(
    createAccessTokenVerifier({ jwksUrl: config.AUTH_JWKS_URL, issuer: config.AUTH_ISSUER, audience: ACCESS_TOKEN_AUDIENCE }),
    new SessionStore(store),
  );
  const gateway = new GatewayClient(config.GATEWAY_URL);
  const codec = new InternalClaimsCodec(config.INTERNAL_SIGNING_KEY);

  const { app } = createService({ name: 'rest-facade', logger, trustProxy: config.FACADE_TRUST_PROXY, readiness: { redis: () => store.ping() } });
  // Auth's own endpoints first (/pat/login and /oauth/* unauthenticated here, the auth app
  // decides; /pat/revoke and /pat/login-activity authenticated here and proxied with signed
  // claims), then everything else under /v1 is an authenticated API call from the route table.
  app.use(docsRouter(BASE_PATH));
  app.use(BASE_PATH, authProxy(config.AUTH_URL, edge, codec));
  app.use(BASE_PATH, authenticate(edge), routeTableRouter(ROUTES, gateway, codec));
  finishService(app, logger);

  return {
    name: 'rest-facade',
    app,
    close: async () => {
      await gateway.close();
      if (!deps.store) await store.close();
    },
  };
}
