import './tracing';
import { runService } from '@trading/service';
import { createBankingApp } from '@trading/banking-service';
import { loadBankingConfig } from '@trading/banking-service';

void runService('banking', () => {
  const config = loadBankingConfig();
  return {
    listen: {
      public: { port: config.BANKING_PORT, host: config.LISTEN_HOST },
      internal: { port: config.BANKING_INTERNAL_PORT, host: config.INTERNAL_LISTEN_HOST },
    },
    logLevel: config.LOG_LEVEL,
    create: (logger) => createBankingApp(config, { logger }),
  };
});
