import { SessionStore } from '@trading/auth';
import { openDatabase, pingDatabase } from '@trading/db';
import { createLogger, type Logger } from '@trading/logging';
import { connectStore, type KeyValueStore } from '@trading/redis';
import { createService, finishService, type ServiceApp } from '@trading/service';
import { adminRoutes } from './admin/admin.routes';
import type { AuthConfig } from './config';
import { SigningKeyEntity } from './keys/signing-key.entity';
import { TokenSigner } from './keys/token-signer';
import { Initial1732230000000 } from './migrations/1732230000000-initial';
import { PersonalAccessTokenEntity } from './pat/pat.entity';
import { patRoutes } from './pat/pat.routes';
import { PatService } from './pat/pat.service';
import { UserEntity } from './users/user.entity';
import { UsersService } from './users/users.service';

export interface AuthDeps {
  logger?: Logger;
  /** Shared session store (the all-in-one mode passes one store to every app). */
  store?: KeyValueStore;
}

export interface AuthApp extends ServiceApp {
  users: UsersService;
  pats: PatService;
  signer: TokenSigner;
}

export { loadAuthConfig, type AuthConfig } from './config';

export async function createAuthApp(config: AuthConfig, deps: AuthDeps = {}): Promise<AuthApp> {
  const logger = deps.logger ?? createLogger('auth', config.LOG_LEVEL);
  const dataSource = await openDatabase({
    url: config.AUTH_DATABASE_URL,
    entities: [UserEntity, PersonalAccessTokenEntity, SigningKeyEntity],
    migrations: [Initial1732230000000],
  });
  const store = deps.store ?? (await connectStore(config.REDIS_URL));
  const signer = await TokenSigner.load(dataSource, config.AUTH_ISSUER);
  const users = new UsersService(dataSource);
  const pats = new PatService(dataSource, signer, new SessionStore(store), config.PAT_SESSION_TTL_SECONDS);

  const { app } = createService({
    name: 'auth',
    logger,
    trustProxy: config.AUTH_TRUST_PROXY,
    readiness: { database: () => pingDatabase(dataSource), redis: () => store.ping() },
  });
  app.get('/.well-known/jwks.json', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(signer.jwks());
  });
  app.use(patRoutes(pats));
  app.use(adminRoutes(config.AUTH_ADMIN_TOKEN, users, pats));
  finishService(app, logger);

  return {
    name: 'auth',
    app,
    users,
    pats,
    signer,
    close: async () => {
      await dataSource.destroy();
      if (!deps.store) await store.close();
    },
  };
}
