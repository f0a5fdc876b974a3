import { createHmac } from 'node:crypto';
import { InternalClaimsCodec, SessionStore } from '@trading/auth';
import { databaseNameOf, openDatabase, pingDatabase } from '@trading/db';
import { createLogger, type Logger } from '@trading/logging';
import { CursorCodec } from '@trading/pagination';
import { FailureLimiter } from '@trading/rate-limit';
import { connectStore, type KeyValueStore } from '@trading/redis';
import { createService, finishService, type ServiceApp } from '@trading/service';
import { adminRoutes } from './admin/admin.routes';
import { dashboardConfigDefaults, type AuthAppConfig, type AuthConfig } from './config';
import { dashboardRoutes } from './dashboard/dashboard.routes';
import { SigningKeyEntity } from './keys/signing-key.entity';
import { TokenSigner } from './keys/token-signer';
import { Initial1732230000000 } from './migrations/1732230000000-initial';
import { PatLoginAttempts1732400000000 } from './migrations/1732400000000-pat-login-attempts';
import { LoginActivityService } from './pat/login-activity.service';
import { PatLoginAttemptEntity } from './pat/login-attempt.entity';
import { PersonalAccessTokenEntity } from './pat/pat.entity';
import { PatLogin } from './pat/pat-login';
import { patRoutes } from './pat/pat.routes';
import { PatService } from './pat/pat.service';
import { UserEntity } from './users/user.entity';
import { UsersService } from './users/users.service';
import { BrowserSessions } from './web/browser-sessions';
import { pageRouter } from './web/pages';
import { signInRoutes } from './web/signin.routes';

export interface AuthDeps {
  logger?: Logger;
  /** Shared session store (the all-in-one mode passes one store to every app). */
  store?: KeyValueStore;
}

export interface AuthApp extends ServiceApp {
  users: UsersService;
  pats: PatService;
  activity: LoginActivityService;
  signer: TokenSigner;
}

export { dashboardConfigDefaults, loadAuthConfig, type AuthAppConfig, type AuthConfig } from './config';

export async function createAuthApp(input: AuthAppConfig, deps: AuthDeps = {}): Promise<AuthApp> {
  const config: AuthConfig = { ...dashboardConfigDefaults(), ...input };
  const logger = deps.logger ?? createLogger('auth', config.LOG_LEVEL);
  const dataSource = await openDatabase({
    url: config.AUTH_DATABASE_URL,
    entities: [UserEntity, PersonalAccessTokenEntity, SigningKeyEntity, PatLoginAttemptEntity],
    migrations: [Initial1732230000000, PatLoginAttempts1732400000000],
  });
  const store = deps.store ?? (await connectStore(config.REDIS_URL));
  const signer = await TokenSigner.load(dataSource, config.AUTH_ISSUER);
  const users = new UsersService(dataSource);
  const pats = new PatService(dataSource, signer, new SessionStore(store), config.PAT_SESSION_TTL_SECONDS);
  const codec = new InternalClaimsCodec(config.INTERNAL_SIGNING_KEY);
  // Cursors get their own key, derived from the shared secret, so a cursor is never a valid claims header.
  const activity = new LoginActivityService(dataSource, new CursorCodec(createHmac('sha256', config.INTERNAL_SIGNING_KEY).update('auth:cursors').digest('hex')));
  // Counters are per deployment (its database), so deployments sharing one Redis never count each other's failures.
  const limiter = (name: string, maxFailures: number) =>
    new FailureLimiter(store, databaseNameOf(config.AUTH_DATABASE_URL), { name, maxFailures, windowSeconds: config.LOGIN_FAILURE_WINDOW_SECONDS });
  const login = new PatLogin(pats, activity, {
    perIp: limiter('pat-login:ip', config.PAT_LOGIN_MAX_FAILURES_PER_IP),
    perToken: limiter('pat-login:token', config.PAT_LOGIN_MAX_FAILURES_PER_TOKEN),
  });

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
  app.use(patRoutes({ pats, login, activity, codec }));
  const sessions = new BrowserSessions(store, config.DASHBOARD_SESSION_TTL_SECONDS);
  const signIn = signInRoutes({
    users,
    sessions,
    limits: { perAccount: limiter('signin:account', config.SIGNIN_MAX_FAILURES_PER_ACCOUNT), perIp: limiter('signin:ip', config.SIGNIN_MAX_FAILURES_PER_IP) },
  });
  app.use(pageRouter(sessions, logger, [signIn, dashboardRoutes({ pats, activity })]));
  app.use(adminRoutes(config.AUTH_ADMIN_TOKEN, users, pats));
  finishService(app, logger);

  return {
    name: 'auth',
    app,
    users,
    pats,
    activity,
    signer,
    close: async () => {
      await dataSource.destroy();
      if (!deps.store) await store.close();
    },
  };
}
