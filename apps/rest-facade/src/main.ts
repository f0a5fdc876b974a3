import { runService } from '@trading/service';
import { createRestFacadeApp } from './app';
import { loadFacadeConfig } from './config';

void runService('rest-facade', () => {
  const config = loadFacadeConfig();
  return { port: config.FACADE_PORT, logLevel: config.LOG_LEVEL, create: (logger) => createRestFacadeApp(config, { logger }) };
});
