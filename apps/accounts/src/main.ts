import { runService } from '@trading/service';
import { createAccountsApp } from './app';
import { loadAccountsConfig } from './config';

void runService('accounts', () => {
  const config = loadAccountsConfig();
  return { port: config.ACCOUNTS_PORT, logLevel: config.LOG_LEVEL, create: (logger) => createAccountsApp(config, { logger }) };
});
