import { runService } from '@trading/service';
import { createAccountsApp } from './app';
import { loadAccountsConfig } from './config';

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
