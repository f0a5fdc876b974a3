import { runService } from '@trading/service';
import { createAuthApp } from './app';
import { loadAuthConfig } from './config';

void runService('auth', () => {
  const config = loadAuthConfig();
  return { port: config.AUTH_PORT, logLevel: config.LOG_LEVEL, create: (logger) => createAuthApp(config, { logger }) };
});
