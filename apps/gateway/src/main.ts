import { runService } from '@trading/service';
import { createGatewayApp } from './app';
import { loadGatewayConfig } from './config';

void runService('gateway', () => {
  const config = loadGatewayConfig();
  return { port: config.GATEWAY_PORT, logLevel: config.LOG_LEVEL, create: (logger) => createGatewayApp(config, { logger }) };
});
