import { runService } from '@trading/service';
import { createOmsApp } from './app';
import { loadOmsConfig } from './config';

void runService('oms', () => {
  const config = loadOmsConfig();
  return { port: config.OMS_PORT, logLevel: config.LOG_LEVEL, create: (logger) => createOmsApp(config, { logger }) };
});
