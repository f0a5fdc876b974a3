import './tracing';
import { runService } from '@trading/service';
import { createOmsApp } from '@trading/oms-service';
import { loadOmsConfig } from '@trading/oms-service';

void runService('oms', () => {
  const config = loadOmsConfig();
  return {
    listen: {
      public: { port: config.OMS_PORT, host: config.LISTEN_HOST },
      internal: { port: config.OMS_INTERNAL_PORT, host: config.INTERNAL_LISTEN_HOST },
    },
    logLevel: config.LOG_LEVEL,
    create: (logger) => createOmsApp(config, { logger }),
  };
});
