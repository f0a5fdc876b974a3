import './tracing';
import { runService } from '@trading/service';
import { createAuthApp } from '@trading/auth-service';
import { loadAuthConfig } from '@trading/auth-service';

void runService('auth', () => {
  const config = loadAuthConfig();
  return {
    listen: {
      public: { port: config.AUTH_PORT, host: config.LISTEN_HOST },
      internal: { port: config.AUTH_INTERNAL_PORT, host: config.INTERNAL_LISTEN_HOST },
      admin: { port: config.AUTH_ADMIN_PORT, host: config.AUTH_ADMIN_HOST },
    },
    logLevel: config.LOG_LEVEL,
    create: (logger) => createAuthApp(config, { logger }),
  };
});
