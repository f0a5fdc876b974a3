import { runService } from '@trading/service';
import { createBankingApp } from './app';
import { loadBankingConfig } from './config';

void runService('banking', () => {
  const config = loadBankingConfig();
  return { port: config.BANKING_PORT, logLevel: config.LOG_LEVEL, create: (logger) => createBankingApp(config, { logger }) };
});
