import { deriveServiceSecret, DpopNonces, DpopVerifier, InternalClaimsVerifier, SigningKeyStates, SessionStore } from '@trading/auth';
import { ConfigError } from '@trading/config';
import { configureProblemTypes } from '@trading/errors';
import { databaseNameOf, databasePoolMetrics, NotifiedCache, openDatabase, pingDatabase, type DataSource } from '@trading/db';
import { createLogger, type Logger } from '@trading/logging';
import { CursorCodec } from '@trading/pagination';
import { FailureLimiter, OAuthAddressBudget, rateLimitRefusals, RequestLimiter, type RefusalCounter } from '@trading/rate-limit';
import { connectEdgeStore, SealedStore, type KeyValueStore } from '@trading/redis';
import { baseApp, createService, finishService, Lifecycle, startPeriodic, type ServiceApp } from '@trading/service';
import { Router, type Express } from 'express';
import { adminRoutes } from './admin/admin.routes';
import { BackOffice } from './back-office/back-office';
import { backOfficeRoutes } from './back-office/back-office.routes';
import { adminAudit } from './admin/audit';
import { adminCredential } from './admin/credential';
import { adminRateLimit } from './admin/rate-limit';
import { clientAddressFromFacade } from './internal/client-address';
import { webOriginsRoute } from './internal/web-origins.route';
import { dashboardConfigDefaults, type AuthAppConfig, type AuthConfig } from './config';
import { dashboardRoutes } from './dashboard/dashboard.routes';
import { SigningKeyEntity } from './keys/signing-key.entity';
import { KeyEncryption } from './keys/key-encryption';
import { purgeExpired } from './retention';
import { TokenSigner } from './keys/token-signer';
import { Initial1732230000000 } from './migrations/1732230000000-initial';
import { PatLoginAttempts1732400000000 } from './migrations/1732400000000-pat-login-attempts';
import { OAuth1732500000000 } from './migrations/1732500000000-oauth';
import { GrantConsent1732600000000 } from './migrations/1732600000000-grant-consent';
import { WebOrigins1732700000000 } from './migrations/1732700000000-web-origins';
import { ClientPolicy1732800000000 } from './migrations/1732800000000-client-policy';
import { PasswordReset1733000000000 } from './migrations/1733000000000-password-reset';
import { PasswordResetRequests1733340000000 } from './migrations/1733340000000-password-reset-requests';
import { DpopNonce1733400000000 } from './migrations/1733400000000-dpop-nonce';
import { GRANTS_CHANGED_CHANNEL, GrantsChanged1733100000000 } from './migrations/1733100000000-grants-changed';
import { CLIENTS_CHANGED_CHANNEL, ClientsChanged1733200000000 } from './migrations/1733200000000-clients-changed';
import { logTransport, MailDispatcher, smtpTransport } from './mail/outbox';
import { localAccessTokenVerifier } from './oauth/access-tokens';
import { authorizeRoute } from './oauth/authorize';
import { ClientKeySets, type ClientKeySetsOptions } from './oauth/client-keys';
import type { OAuthContext } from './oauth/context';
import { oauthErrorHandler } from './oauth/errors';
import { GrantService, type StoredGrant } from './oauth/grants';
import { loginRoutes } from './oauth/login.routes';
import { metadataRoute } from './oauth/metadata';
import type { ClientLimits } from './oauth/client-limits';
import { parRoute } from './oauth/par';
import { revokeRoute } from './oauth/revoke';
import { tokenRoute } from './oauth/token';
import { userinfoRoute } from './oauth/userinfo';
import { RegistryService, type ClientRow } from './registry/registry.service';
import { LoginActivityService } from './pat/login-activity.service';
import { PatLoginAttemptEntity } from './pat/login-attempt.entity';
import { PersonalAccessTokenEntity } from './pat/pat.entity';
import { PatLogin } from './pat/pat-login';
import { patAccountRoutes, patLoginRoutes } from './pat/pat.routes';
import { PatService } from './pat/pat.service';
import { UserEntity } from './users/user.entity';
import { UsersService } from './users/users.service';
import { BrowserSessions } from './web/browser-sessions';
import { PasswordResets } from './password-reset/password-reset.service';
import { passwordResetRoutes } from './password-reset/password-reset.routes';
import { ResetMailBudget } from './password-reset/reset-mail-budget';
import { htmlNotFound } from './web/error.page';
import { homeRoutes } from './web/home.routes';
import { pageRouter } from './web/pages';
import { signInRoutes } from './web/signin.routes';

export interface AuthDeps {
  logger?: Logger;
  /** Shared session store (the all-in-one mode passes one store to every app). */
  store?: KeyValueStore;
  /** How jwks_uri hosts are resolved and which certificates their servers may present besides the system's (tests). */
  clientKeys?: Pick<ClientKeySetsOptions, 'resolve' | 'ca'>;
}

export interface AuthApp extends ServiceApp {
  dataSource: DataSource;
  users: UsersService;
  pats: PatService;
  activity: LoginActivityService;
  signer: TokenSigner;
  registry: RegistryService;
  grants: GrantService;
  mail: MailDispatcher;
}

export { dashboardConfigDefaults, loadAuthConfig, type AuthAppConfig } from './config';
/** AES-256-GCM under a key derived from a secret: also what the all-in-one seals its services' identities with. */
export { KeyEncryption } from './keys/key-encryption';
/** Where an account's last reset mail is marked in Redis (a test makes the floor's time pass by expiring it). */
export { resetMailFloorKey } from './password-reset/reset-mail-budget';

export async function createAuthApp(input: AuthAppConfig, deps: AuthDeps = {}): Promise<AuthApp> {
  const config: AuthConfig = { ...dashboardConfigDefaults(), ...input };
  const problems = configProblems(config);
  if (problems.length) throw new ConfigError('auth', problems);
  const logger = deps.logger ?? createLogger('auth', config.LOG_LEVEL);
  // Everything opened below is closed in reverse on close(), or at once if a later step fails.
  // Problem `type` URLs name pages this origin serves (/problems/<code>).
  configureProblemTypes(config.AUTH_ISSUER);
  const life = Lifecycle.of('auth', logger);
  return life.build(async () => {
    const services = await openAuthServices(life, config, deps, logger);
    const { dataSource, store, signer, users, pats, activity, registry, grants, mail, verifier } = services;

    const { app, internal, metrics } = createService({
      name: 'auth',
      logger,
      trustProxy: config.AUTH_TRUST_PROXY,
      readiness: { database: () => pingDatabase(dataSource), redis: () => store.ping() },
    });
    databasePoolMetrics(metrics, dataSource);
    // Every 429 auth answers, by budget, under the facade's and gateway's metric (served on the internal listener).
    const refusals = rateLimitRefusals(metrics, [
      'oauth_client',
      'oauth_client_auth_failures',
      'oauth_address',
      'sign_in',
      'password_reset',
      'pat_login',
      'admin',
    ]);
    const listeners = { app, internal };
    mountSigningKeys(app, signer);
    // The facade reaches auth's API on the internal listener, with the client address it signed.
    internal.use(clientAddressFromFacade(verifier));
    // DPoP proofs (RFC 9449): the jti replay cache is in Redis, shared with every instance and both edges.
    const dpopVerifier = new DpopVerifier(store);
    // Callers reaching this listener directly (not through the facade) spend the facade's address
    // budget for /oauth/* and /pat/login: the same counter, keyed by the address this listener
    // decides on (AUTH_TRUST_PROXY). Not on the internal listener: the facade counted those already.
    app.use(
      new OAuthAddressBudget(store, config.API_RATE_LIMIT_NAMESPACE, config.OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE, metrics).middleware(),
    );
    mountPatRoutes(services, listeners, refusals, dpopVerifier);
    internal.use(webOriginsRoute(registry, config.APP_ENV, verifier));
    const oauth = mountOAuthRoutes(services, listeners, refusals, dpopVerifier, deps);
    mountPages(services, app, refusals, oauth);
    const admin = adminApp(services, refusals);
    // A browser at an address that does not exist gets a page in its language; API clients keep problem+json.
    app.use(htmlNotFound());
    finishService(app, logger);
    finishService(internal, logger);
    finishService(admin, logger);
    startBackgroundWork(services);

    return {
      name: 'auth',
      dataSource,
      app,
      internal,
      admin,
      users,
      pats,
      activity,
      signer,
      registry,
      grants,
      mail,
      close: () => life.close(),
    };
  });
}

/** Settings that are each valid but do not go together, or not in this environment. */
function configProblems(config: AuthConfig): string[] {
  // Vendors' client secrets must reach them by mail; outside DEV a local file will not do.
  return [
    ...(config.APP_ENV !== 'DEV' && !config.SMTP_URL
      ? [`SMTP_URL: is required when APP_ENV is ${config.APP_ENV} (client secrets are delivered by e-mail)`]
      : []),
    ...(config.APP_ENV !== 'DEV' && !config.AUTH_KEY_ENCRYPTION_KEY
      ? [`AUTH_KEY_ENCRYPTION_KEY: is required when APP_ENV is ${config.APP_ENV} (it encrypts the signing keys at rest)`]
      : []),
    // The floor promises the owner a live link: the last mail's link must outlive the wait for the next.
    ...(config.PASSWORD_RESET_FLOOR_SECONDS > config.PASSWORD_RESET_TTL_SECONDS
      ? [
          `PASSWORD_RESET_FLOOR_SECONDS: must be at most PASSWORD_RESET_TTL_SECONDS (${config.PASSWORD_RESET_TTL_SECONDS}), or an owner could be left with no live link`,
        ]
      : []),
    // Fetching a jwks_uri on this machine is for a vendor's local tests only.
    ...(config.APP_ENV !== 'DEV' && config.OAUTH_JWKS_URI_ALLOW_LOOPBACK
      ? [`OAUTH_JWKS_URI_ALLOW_LOOPBACK: may be true only when APP_ENV is DEV, not ${config.APP_ENV}`]
      : []),
  ];
}

/** What auth's routes are made of: its stores and services, opened once per app. */
interface AuthServices {
  config: AuthConfig;
  logger: Logger;
  life: Lifecycle;
  dataSource: DataSource;
  store: KeyValueStore;
  signer: TokenSigner;
  users: UsersService;
  sessionStore: SessionStore;
  pats: PatService;
  grants: GrantService;
  registry: RegistryService;
  mail: MailDispatcher;
  verifier: InternalClaimsVerifier;
  /** Records that grant something when read back, sealed with a key Redis never sees. */
  sealed: SealedStore;
  activity: LoginActivityService;
  /** This deployment's name for its counters in Redis (its database's). */
  namespace: string;
  /** A failure counter of this deployment, over the login failure window. */
  limiter: (name: string, maxFailures: number) => FailureLimiter;
  login: PatLogin;
}

/** The database and Redis, then every service built on them, in the order they must close in reverse. */
async function openAuthServices(life: Lifecycle, config: AuthConfig, deps: AuthDeps, logger: Logger): Promise<AuthServices> {
  const dataSource = life.own('database', await openAuthDatabase(config), (db) => db.destroy());
  // Reads made on every token request (the signing keys' version, address budgets) answered from memory, as at the edges.
  const store = deps.store ?? life.own('redis', await connectEdgeStore(config), (s) => s.close());
  const encryption = new KeyEncryption(config.AUTH_KEY_ENCRYPTION_KEY ?? deriveServiceSecret(config.SERVICE_KEY, 'signing-key-encryption'));
  const signer = await TokenSigner.load(dataSource, config.AUTH_ISSUER, encryption, {
    states: new SigningKeyStates(store),
    namespace: databaseNameOf(config.AUTH_DATABASE_URL),
  });
  signer.startRefreshing(config.AUTH_SIGNING_KEY_RELOAD_MS, logger);
  life.defer('signing-key reload', () => signer.stop());
  const users = new UsersService(dataSource);
  const sessionStore = new SessionStore(store);
  const pats = new PatService(dataSource, signer, sessionStore, config.PAT_SESSION_TTL_SECONDS, config.PAT_MAX_LIVE_PER_USER);
  // Rows read on every token request, kept current by PostgreSQL's announcements (one listening session each).
  const remembered = <V>(name: string, channel: string, maxEntries: number) => {
    const cache = life.own(name, new NotifiedCache<V>({ url: config.AUTH_DATABASE_URL, channel, logger, maxEntries }), (c) => c.close());
    cache.start();
    return cache;
  };
  const rememberedGrants = remembered<StoredGrant | null>('grants cache', GRANTS_CHANGED_CHANNEL, config.OAUTH_GRANT_CACHE_ENTRIES);
  const grants = new GrantService(dataSource, sessionStore, rememberedGrants);
  const rememberedClients = remembered<ClientRow>('clients cache', CLIENTS_CHANGED_CHANNEL, config.OAUTH_CLIENT_CACHE_ENTRIES);
  const registry = new RegistryService(dataSource, grants, rememberedClients, { allowLoopback: config.OAUTH_JWKS_URI_ALLOW_LOOPBACK });
  const mail = new MailDispatcher(
    dataSource,
    config.SMTP_URL ? smtpTransport(config.SMTP_URL) : logTransport(config.MAIL_LOG_FILE, logger),
    config.MAIL_FROM,
    logger,
  );
  const verifier = new InternalClaimsVerifier('auth', config.SERVICE_TRUSTED_KEYS);
  // Records that grant something when read back (codes, refresh tokens, consents, browser
  // sessions) are sealed with a key Redis never sees: one written by anyone else reads as missing.
  const sealed = new SealedStore(store, deriveServiceSecret(config.SERVICE_KEY, 'redis-records'), (key) =>
    logger.error({ record: key.split(':')[0] }, 'a record in Redis failed its seal: something other than auth wrote it'),
  );
  // Cursors get their own key, derived from the service key for that purpose alone.
  const activity = new LoginActivityService(dataSource, new CursorCodec(deriveServiceSecret(config.SERVICE_KEY, 'cursors')));
  // Counters are per deployment (its database), so deployments sharing one Redis never count each other's failures.
  const namespace = databaseNameOf(config.AUTH_DATABASE_URL);
  const limiter = (name: string, maxFailures: number) =>
    new FailureLimiter(store, namespace, { name, maxFailures, windowSeconds: config.LOGIN_FAILURE_WINDOW_SECONDS });
  const login = new PatLogin(pats, activity, {
    perIp: limiter('pat-login:ip', config.PAT_LOGIN_MAX_FAILURES_PER_IP),
    perToken: limiter('pat-login:token', config.PAT_LOGIN_MAX_FAILURES_PER_TOKEN),
  });
  return {
    config,
    logger,
    life,
    dataSource,
    store,
    signer,
    users,
    sessionStore,
    pats,
    grants,
    registry,
    mail,
    verifier,
    sealed,
    activity,
    namespace,
    limiter,
    login,
  };
}

/** Auth's database, migrated to this version's schema. */
function openAuthDatabase(config: AuthConfig): Promise<DataSource> {
  return openDatabase({
    url: config.AUTH_DATABASE_URL,
    entities: [UserEntity, PersonalAccessTokenEntity, SigningKeyEntity, PatLoginAttemptEntity],
    migrations: [
      Initial1732230000000,
      PatLoginAttempts1732400000000,
      OAuth1732500000000,
      GrantConsent1732600000000,
      WebOrigins1732700000000,
      ClientPolicy1732800000000,
      PasswordReset1733000000000,
      GrantsChanged1733100000000,
      ClientsChanged1733200000000,
      PasswordResetRequests1733340000000,
      DpopNonce1733400000000,
    ],
    limits: config.DB_STATEMENT_TIMEOUT_MS === undefined ? undefined : { statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS },
  });
}

/** The public listener and the internal one (the facade's way in). */
interface Listeners {
  app: Express;
  internal: Express;
}

const withoutTrailingSlash = (url: string) => url.replace(/\/+$/, '');

/** The public keys access tokens are verified with (RFC 7517), cached by the edges for a while. */
function mountSigningKeys(app: Express, signer: TokenSigner): void {
  app.get('/.well-known/jwks.json', async (_req, res) => {
    const jwks = await signer.currentJwks();
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(jwks);
  });
}

/** PAT login on both listeners (a DPoP proof names either public URL); the account's PATs and their activity on the internal one. */
function mountPatRoutes(
  { config, login, pats, activity, verifier }: AuthServices,
  { app, internal }: Listeners,
  refusals: RefusalCounter,
  dpopVerifier: DpopVerifier,
): void {
  const apiUrl = withoutTrailingSlash(config.AUTH_API_URL);
  const issuerUrl = withoutTrailingSlash(config.AUTH_ISSUER);
  const patLogin = patLoginRoutes({
    login,
    refusals,
    dpop: { verifier: dpopVerifier, urls: [`${apiUrl}/pat/login`, `${issuerUrl}/pat/login`] },
  });
  app.use(patLogin);
  internal.use(patLogin, patAccountRoutes({ pats, activity, verifier }));
}

/**
 * OAuth 2.0: metadata and the authorize redirect, then the API side (token, PAR, revocation,
 * userinfo), which answers RFC 6749 errors, on both listeners. Returns the context the login
 * pages share.
 */
function mountOAuthRoutes(
  services: AuthServices,
  { app, internal }: Listeners,
  refusals: RefusalCounter,
  dpopVerifier: DpopVerifier,
  deps: AuthDeps,
): OAuthContext {
  const { config, logger, life, store, signer, namespace, limiter } = services;
  // private_key_jwt clients' keys; a jwks_uri is fetched from public addresses only.
  const clientKeys = new ClientKeySets({ allowLoopback: config.OAUTH_JWKS_URI_ALLOW_LOOPBACK, ...deps.clientKeys });
  life.defer('jwks_uri connections', () => clientKeys.close());
  const oauth = oauthContext(services, clientKeys, dpopVerifier);
  const verifyAccessToken = localAccessTokenVerifier(signer, config.AUTH_ISSUER);
  const tokenLimits: ClientLimits = {
    perClientAddress: limiter('oauth-client', config.OAUTH_CLIENT_MAX_FAILURES),
    perAddress: limiter('oauth-token:ip', config.OAUTH_TOKEN_MAX_FAILURES_PER_IP),
    perClient: new RequestLimiter(store, namespace, {
      name: 'oauth-token:client',
      perMinute: config.OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT,
    }),
    refusals,
  };
  app.use(metadataRoute(oauth.settings), authorizeRoute());
  internal.use(metadataRoute(oauth.settings), authorizeRoute(withoutTrailingSlash(config.AUTH_ISSUER)));
  const oauthApi = Router().use(
    tokenRoute(oauth, tokenLimits),
    parRoute(oauth, tokenLimits),
    revokeRoute(oauth, verifyAccessToken, tokenLimits),
    userinfoRoute(oauth, verifyAccessToken),
    oauthErrorHandler((err) => logger.error({ err }, 'unhandled OAuth error')),
  );
  app.use(oauthApi);
  internal.use(oauthApi);
  return oauth;
}

/** What every OAuth endpoint works with: its settings, and the services and stores behind grants and tokens. */
function oauthContext(
  { config, registry, grants, sessionStore, signer, sealed, users }: AuthServices,
  clientKeys: ClientKeySets,
  dpopVerifier: DpopVerifier,
): OAuthContext {
  return {
    settings: {
      environment: config.APP_ENV,
      issuer: config.AUTH_ISSUER,
      apiUrl: withoutTrailingSlash(config.AUTH_API_URL),
      codeTtlSeconds: config.OAUTH_CODE_TTL_SECONDS,
      parTtlSeconds: config.OAUTH_PAR_TTL_SECONDS,
      requirePushedAuthorizationRequests: config.OAUTH_REQUIRE_PAR,
      accessTokenTtlSeconds: config.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenTtlSeconds: config.OAUTH_REFRESH_TOKEN_TTL_SECONDS,
      refreshReuseGraceSeconds: config.OAUTH_REFRESH_REUSE_GRACE_SECONDS,
    },
    registry,
    grants,
    sessions: sessionStore,
    signer,
    store: sealed,
    users,
    retryCipher: new KeyEncryption(deriveServiceSecret(config.SERVICE_KEY, 'refresh-retries')),
    clientKeys,
    dpop: {
      verifier: dpopVerifier,
      nonces: new DpopNonces(deriveServiceSecret(config.SERVICE_KEY, 'dpop-nonces')),
      nonceRequired: config.DPOP_NONCE_REQUIRED ?? false,
    },
  };
}

/** The browser's pages: home, sign-in, password reset, the OAuth login and consent, the dashboard. */
function mountPages(services: AuthServices, app: Express, refusals: RefusalCounter, oauth: OAuthContext): void {
  const { config, logger, users, registry, sealed, pats, activity, grants, limiter } = services;
  const sessions = new BrowserSessions(sealed, config.DASHBOARD_SESSION_TTL_SECONDS);
  const signInPerAccount = limiter('signin:account', config.SIGNIN_MAX_FAILURES_PER_ACCOUNT);
  const signIn = signInRoutes({
    users,
    sessions,
    limits: { perAccount: signInPerAccount, perIp: limiter('signin:ip', config.SIGNIN_MAX_FAILURES_PER_IP) },
    refusals,
    apps: { registry, environment: config.APP_ENV },
  });
  const passwordReset = passwordResetPages(services, sessions, signInPerAccount, refusals);
  app.use(
    pageRouter(sessions, logger, [
      homeRoutes(withoutTrailingSlash(config.AUTH_API_URL)),
      signIn,
      passwordReset,
      loginRoutes(oauth),
      dashboardRoutes({ pats, activity, grants, flash: sealed }),
    ]),
  );
}

/** Password reset by e-mail: requests become links and mails out of band, in the mail dispatcher's passes. */
function passwordResetPages(
  { config, dataSource, store, namespace, mail, pats, grants }: AuthServices,
  sessions: BrowserSessions,
  signInPerAccount: FailureLimiter,
  refusals: RefusalCounter,
): Router {
  const resets = new PasswordResets(
    dataSource,
    { ttlSeconds: config.PASSWORD_RESET_TTL_SECONDS, publicUrl: withoutTrailingSlash(config.AUTH_ISSUER) },
    () => mail.wake(),
  );
  mail.addSource(() => resets.issuePending());
  return passwordResetRoutes({
    resets,
    sessions,
    credentials: { pats, grants },
    limits: {
      perAddress: new RequestLimiter(store, namespace, {
        name: 'password-reset:ip',
        perMinute: config.PASSWORD_RESET_MAX_PER_ADDRESS_PER_MINUTE,
      }),
      mails: new ResetMailBudget(store, namespace, {
        perAccountAndAddress: config.PASSWORD_RESET_MAX_PER_ACCOUNT_AND_ADDRESS,
        perAccount: config.PASSWORD_RESET_MAX_PER_ACCOUNT,
        windowSeconds: config.PASSWORD_RESET_ACCOUNT_WINDOW_SECONDS,
        floorSeconds: config.PASSWORD_RESET_FLOOR_SECONDS,
      }),
      signInPerAccount,
    },
    refusals,
  });
}

/** The service team's API: its own listener (loopback by default), limited and audited. */
function adminApp(
  { config, logger, life, store, namespace, users, pats, registry, signer }: AuthServices,
  refusals: RefusalCounter,
): Express {
  const backOffice = life.own('back-office clients', new BackOffice(config, config.SERVICE_KEY), (b) => b.close());
  const admin = baseApp({ name: 'auth-admin', logger }, 'admin');
  const isAdmin = adminCredential(config.AUTH_ADMIN_TOKEN);
  // Audit first, so calls the limit refuses are on record too.
  admin.use(
    adminAudit(config.AUTH_ADMIN_TOKEN, logger, isAdmin),
    adminRateLimit(store, namespace, config.AUTH_ADMIN_MAX_REQUESTS_PER_MINUTE, refusals, isAdmin),
    adminRoutes(config.AUTH_ADMIN_TOKEN, users, pats, registry, signer, backOfficeRoutes(users, backOffice)),
  );
  return admin;
}

/** The mail dispatcher's passes and the retention purge, each stopped on close. */
function startBackgroundWork({ config, logger, life, dataSource, mail }: AuthServices): void {
  mail.start(config.MAIL_POLL_MS);
  life.defer('mail dispatcher', () => mail.stop());
  const retention = startPeriodic(
    'retention',
    config.RETENTION_INTERVAL_MS,
    () => purgeExpired(dataSource, { loginAttemptDays: config.LOGIN_ACTIVITY_RETENTION_DAYS }),
    logger,
  );
  life.defer('retention', () => retention.stop());
}
