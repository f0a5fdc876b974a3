import './tracing';
import { runService } from '@trading/service';
import { createGatewayApp } from '@trading/gateway-service';
import { loadGatewayConfig } from '@trading/gateway-service';

void runService('gateway', () => {
  const config = loadGatewayConfig();
  return {
    listen: {
      public: { port: config.GATEWAY_PORT, host: config.LISTEN_HOST },
      internal: { port: config.GATEWAY_INTERNAL_PORT, host: config.INTERNAL_LISTEN_HOST },
    },
    logLevel: config.LOG_LEVEL,
    create: (logger) => createGatewayApp(config, { logger }),
  };
});
