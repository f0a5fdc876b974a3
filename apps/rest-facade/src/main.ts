import './tracing';
import { runService } from '@trading/service';
import { createRestFacadeApp } from '@trading/rest-facade-service';
import { loadFacadeConfig } from '@trading/rest-facade-service';

void runService('rest-facade', () => {
  const config = loadFacadeConfig();
  return {
    listen: {
      public: { port: config.FACADE_PORT, host: config.LISTEN_HOST },
      internal: { port: config.FACADE_INTERNAL_PORT, host: config.INTERNAL_LISTEN_HOST },
    },
    logLevel: config.LOG_LEVEL,
    create: (logger) => createRestFacadeApp(config, { logger }),
  };
});
