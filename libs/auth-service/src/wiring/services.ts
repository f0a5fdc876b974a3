import { deriveServiceSecret, InternalClaimsVerifier, SigningKeyStates, SessionStore } from '@trading/auth';
import { databaseNameOf, NotifiedCache, type DataSource } from '@trading/db';
import type { Logger } from '@trading/logging';
import { CursorCodec } from '@trading/pagination';
import { FailureLimiter } from '@trading/rate-limit';
import { connectEdgeStore, SealedStore, type KeyValueStore } from '@trading/redis';
import type { Lifecycle } from '@trading/service';
import type { AuthConfig } from '../config';
import { BackOffice } from '../back-office/back-office';
import { KeyEncryption } from '../keys/key-encryption';
import { TokenSigner } from '../keys/token-signer';
import { logTransport, MailDispatcher, smtpTransport } from '../mail/outbox';
import { GRANTS_CHANGED_CHANNEL } from '../migrations/1733100000000-grants-changed';
import { CLIENTS_CHANGED_CHANNEL } from '../migrations/1733200000000-clients-changed';
import { GrantService, type StoredGrant } from '../oauth/grants';
import { LoginActivityService } from '../pat/login-activity.service';
import { PatLogin } from '../pat/pat-login';
import { PatService } from '../pat/pat.service';
import { RegistryService, type ClientRow } from '../registry/registry.service';
import { SecondFactorStore } from '../second-factor/second-factor.store';
import { SecurityLog } from '../security-log/security-log';
import { UserAccounts } from '../users/user-accounts';
import { UsersService } from '../users/users.service';
import { openAuthDatabase } from './database';
import { withoutTrailingSlash } from './urls';

/** What auth's routes are made of: its stores and services, opened once per app. */
export interface AuthServices {
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
  /** Users' authenticator apps and recovery codes (secrets encrypted under AUTH_KEY_ENCRYPTION_KEY). */
  secondFactors: SecondFactorStore;
  /** Encrypts webhook endpoints' signing secrets (under AUTH_KEY_ENCRYPTION_KEY): auth signs with them, so they cannot be hashed. */
  webhookSecrets: KeyEncryption;
  /** The users' security log; each event's notice goes through the mail outbox. */
  securityLog: SecurityLog;
  /** The domains' back-office APIs (the admin API's, and where a user's accounts are listed). */
  backOffice: BackOffice;
  /** A user's accounts, to choose which an app or a token may reach. */
  userAccounts: UserAccounts;
}

/**
 * The database and Redis (`shared`: a store the all-in-one mode passes to every app, else one of
 * auth's own), then every service built on them, in the order they must close in reverse.
 */
export async function openAuthServices(
  life: Lifecycle,
  config: AuthConfig,
  shared: KeyValueStore | undefined,
  logger: Logger,
): Promise<AuthServices> {
  const dataSource = life.own('database', await openAuthDatabase(config), (db) => db.destroy());
  // Reads made on every token request (the signing keys' version, address budgets) answered from memory, as at the edges.
  const store = shared ?? life.own('redis', await connectEdgeStore(config), (s) => s.close());
  const keyEncryptionSecret = config.AUTH_KEY_ENCRYPTION_KEY ?? deriveServiceSecret(config.SERVICE_KEY, 'signing-key-encryption');
  const signer = await openSigner(life, config, dataSource, store, logger, keyEncryptionSecret);
  const users = new UsersService(dataSource);
  const sessionStore = new SessionStore(store);
  const securityLog = new SecurityLog(dataSource, withoutTrailingSlash(config.AUTH_ISSUER), () => mail.wake());
  const backOffice = life.own('back-office clients', new BackOffice(config, config.SERVICE_KEY), (b) => b.close());
  const userAccounts = new UserAccounts(backOffice);
  const pats = new PatService(
    dataSource,
    signer,
    sessionStore,
    config.PAT_SESSION_TTL_SECONDS,
    config.PAT_MAX_LIVE_PER_USER,
    securityLog,
    userAccounts,
  );
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
    secondFactors: new SecondFactorStore(dataSource, new KeyEncryption(keyEncryptionSecret, 'second-factor-secrets')),
    webhookSecrets: new KeyEncryption(keyEncryptionSecret, 'webhook-secrets'),
    securityLog,
    backOffice,
    userAccounts,
  };
}

/** The token signer, its keys read from the database (decrypted with `keyEncryptionSecret`) and reloaded as they change. */
async function openSigner(
  life: Lifecycle,
  config: AuthConfig,
  dataSource: DataSource,
  store: KeyValueStore,
  logger: Logger,
  keyEncryptionSecret: string,
): Promise<TokenSigner> {
  const signer = await TokenSigner.load(
    dataSource,
    config.AUTH_ISSUER,
    new KeyEncryption(keyEncryptionSecret),
    {
      states: new SigningKeyStates(store),
      namespace: databaseNameOf(config.AUTH_DATABASE_URL),
    },
    config.APP_ENV,
  );
  signer.startRefreshing(config.AUTH_SIGNING_KEY_RELOAD_MS, logger);
  life.defer('signing-key reload', () => signer.stop());
  return signer;
}
