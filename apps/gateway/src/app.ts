import { readFileSync } from 'node:fs';
import { ApolloGateway } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { expressMiddleware } from '@as-integrations/express5';
import express from 'express';
import { ACCESS_TOKEN_AUDIENCE, createAccessTokenVerifier, EdgeAuthenticator, InternalClaimsCodec, SessionStore } from '@trading/auth';
import { createLogger, type Logger } from '@trading/logging';
import { connectStore, type KeyValueStore } from '@trading/redis';
import { createService, finishService, type ServiceApp } from '@trading/service';
import type { GatewayConfig } from './config';
import { gatewayContext, type GatewayContext } from './context';
import { maskError } from './mask-errors';
import { closeSubgraphConnections, SubgraphSource } from './subgraph-source';

export { loadGatewayConfig, type GatewayConfig } from './config';

export async function createGatewayApp(config: GatewayConfig, deps: { logger?: Logger; store?: KeyValueStore } = {}): Promise<ServiceApp> {
  const logger = deps.logger ?? createLogger('gateway', config.LOG_LEVEL);
  const store = deps.store ?? (await connectStore(config.REDIS_URL));
  const subgraphUrls: Record<string, string> = { accounts: config.ACCOUNTS_URL, banking: config.BANKING_URL, oms: config.OMS_URL };

  const gateway = new ApolloGateway({
    supergraphSdl: readFileSync(config.SUPERGRAPH_PATH, 'utf8'),
    buildService: ({ name, url }) => new SubgraphSource(subgraphUrls[name] ?? url!),
  });
  // The app decides when to stop (runService or the platform); Apollo must not grab SIGTERM itself.
  const server = new ApolloServer<GatewayContext>({ gateway, formatError: maskError, includeStacktraceInErrorResponses: false, stopOnTerminationSignals: false });
  await server.start();

  const edge = new EdgeAuthenticator(
    createAccessTokenVerifier({ jwksUrl: config.AUTH_JWKS_URL, issuer: config.AUTH_ISSUER, audience: ACCESS_TOKEN_AUDIENCE }),
    new SessionStore(store),
  );
  const codec = new InternalClaimsCodec(config.INTERNAL_SIGNING_KEY);

  const { app } = createService({ name: 'gateway', logger, trustProxy: config.GATEWAY_TRUST_PROXY, readiness: { redis: () => store.ping() } });
  app.use('/graphql', express.json({ limit: '1mb' }), expressMiddleware(server, { context: gatewayContext(edge, codec) }));
  finishService(app, logger);

  return {
    name: 'gateway',
    app,
    close: async () => {
      await server.stop();
      await closeSubgraphConnections();
      if (!deps.store) await store.close();
    },
  };
}
