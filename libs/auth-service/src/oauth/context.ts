import type { DpopNonces, DpopVerifier } from '@trading/auth';
import type { KeyEncryption } from '../keys/key-encryption';
import type { SessionStore } from '@trading/auth';
import type { KeyValueStore } from '@trading/redis';
import type { TokenSigner } from '../keys/token-signer';
import type { Environment, RegistryService } from '../registry/registry.service';
import type { SecurityLog } from '../security-log/security-log';
import type { UserAccounts } from '../users/user-accounts';
import type { UsersService } from '../users/users.service';
import type { ClientKeySets } from './client-keys';
import type { GrantService } from './grants';

export interface OAuthSettings {
  /** The one environment this deployment serves (APP_ENV): only its credentials and redirect URIs count. */
  environment: Environment;
  /** `iss` of tokens and the authorization server's identifier ({login_url}). */
  issuer: string;
  /** {base_url}: where clients reach /oauth/token, /oauth/revoke, /oauth/userinfo (through the facade). */
  apiUrl: string;
  codeTtlSeconds: number;
  /** Lifetime of a pushed authorization request (RFC 9126). */
  parTtlSeconds: number;
  /** Server-wide: authorization requests only by PAR (every app, whatever its own setting). */
  requirePushedAuthorizationRequests: boolean;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** A spent refresh token presented again within this time is a concurrent refresh, not a theft: refused without revoking. */
  refreshReuseGraceSeconds: number;
}

/** What every OAuth endpoint works with. */
export interface OAuthContext {
  settings: OAuthSettings;
  registry: RegistryService;
  grants: GrantService;
  sessions: SessionStore;
  signer: TokenSigner;
  /** Sealed records (codes, refresh tokens, retry answers), over the same Redis as `sessions.store`: a swap here may write sessions too. */
  store: KeyValueStore;
  users: UsersService;
  /** Encrypts what Redis keeps for a refresh retry (the new pair), with a key Redis never sees. */
  retryCipher: KeyEncryption;
  /** The keys private_key_jwt clients sign with: registered, or fetched from their jwks_uri (public addresses only). */
  clientKeys: ClientKeySets;
  /** DPoP (RFC 9449) at the token endpoint: proofs, server nonces, and whether every client must send the nonce. */
  dpop: { verifier: DpopVerifier; nonces: DpopNonces; nonceRequired: boolean };
  /** The users' security log: a consent is recorded in it (and mailed). */
  securityLog: SecurityLog;
  /** The user's accounts, offered on the consent page: the app reaches only those ticked. */
  userAccounts: UserAccounts;
}
