import './tracing';
import { runService } from '@trading/service';
import { createAccountsApp } from '@trading/accounts-service';
import { loadAccountsConfig } from '@trading/accounts-service';

void runService('accounts', () => {
  const config = loadAccountsConfig();
  return {
    listen: {
      public: { port: config.ACCOUNTS_PORT, host: config.LISTEN_HOST },
      internal: { port: config.ACCOUNTS_INTERNAL_PORT, host: config.INTERNAL_LISTEN_HOST },
    },
    logLevel: config.LOG_LEVEL,
    create: (logger) => createAccountsApp(config, { logger }),
  };
});
