// What the all-in-one offers its end-to-end tests (apps/platform-e2e), which start it in their
// own process and drive it from outside; nothing else imports the launcher.
export {
  createPlatform,
  type Platform,
  type PlatformOverrides,
  type SettlementService,
  type SettlementServiceSpec,
  type StartSettlementService,
} from './app';
export { loadPlatformConfig, type PlatformConfig } from './config';
export { DEMO_ACCOUNTS, DEMO_POSITIONS, DEMO_USERS, DEMO_VENDOR_APP } from './demo-data';
export { demoCredentialsPath, docsRedirectUris, prepareDemo, type DemoCredentials } from './demo-start';
export { LISTENER_PORTS } from './ports';
export { SERVICE_IDENTITIES_FILE } from './service-identities';
export { claimDataDir } from './data-dir-lock';
export { clusterPath, startEmbeddedPostgres } from './embedded-postgres';
export { ensureAdminToken } from './admin-token';
export { postmasterPid, removeStaleLockFile, removeStaleSocketLock, running, runningPostmaster } from './postmaster';
