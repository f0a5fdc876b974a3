import { createPrivateKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { exportJWK, SignJWT } from 'jose';
import { IsNull, type DataSource, type EntityManager } from 'typeorm';
import {
  ACCESS_TOKEN_AUDIENCE,
  ACCESS_TOKEN_TYPE,
  type Claims,
  type DeploymentEnvironment,
  type SigningKeyStates,
  type SigningKeyState,
} from '@trading/auth';
import { AppError, errors } from '@trading/errors';
import type { Logger } from '@trading/logging';
import { startPeriodic, type PeriodicTask } from '@trading/service';
import { KeyEncryption } from './key-encryption';
import { SigningKeyEntity, type SigningKey } from './signing-key.entity';

/** A signing key as the admin API lists it. */
export interface SigningKeyView {
  kid: string;
  createdAt: string;
  retiredAt: string | null;
  status: 'ACTIVE' | 'PUBLISHED' | 'RETIRED';
}

/** Where the key set's marks and version live in Redis, and the deployment they belong to. */
export interface SigningKeyMarks {
  states: SigningKeyStates;
  /** The deployment (its auth database's name): its instances share one key-set version. */
  namespace: string;
}

/**
 * Signs access tokens with the newest live ES256 key and publishes every live key as JWKS.
 * Keys live in PostgreSQL, private halves encrypted (KeyEncryption). Every change of the key set
 * writes a new key-set version to Redis once it commits; before an instance signs anything or
 * serves its keys, it reads that version (from memory, invalidated by Redis the moment it
 * changes) and reloads first if it is not the one it loaded. So a rotation or retirement reaches
 * every instance at once, without a restart; a reload every few seconds is the safety net. A key
 * marked retired is never used to sign, whatever the version says.
 * The first instance to start creates a key (under an advisory lock, so exactly one is made).
 *
 * Rotation: `rotate` adds a key, which signs from then on; the previous one stays published so
 * its tokens still verify, until `retire` removes it (the active key cannot be retired).
 *
 * Every key's state is also marked in Redis (SigningKeyStates) before its change commits: the edges
 * check each token's `kid` there, so a retired key's tokens are refused everywhere once `retire`
 * answers (although the edges cache verified tokens and the JWKS), and a new key's first tokens
 * make them fetch the JWKS at once.
 */
export class TokenSigner {
  private active!: { kid: string; key: KeyObject };
  private published: { keys: Record<string, unknown>[] } = { keys: [] };
  private refreshing?: PeriodicTask;
  private readonly states?: SigningKeyStates;
  /** The key-set version the keys in memory were read under. */
  private loadedVersion: string | null = null;
  /** The reload under way for a version, which every request that sees that version waits for. */
  private reloading?: { version: string | null; done: Promise<void> };
  /** Reloads started and the latest one applied: a slow, older read never replaces a newer one. */
  private loadsStarted = 0;
  private loadApplied = 0;

  private constructor(
    private readonly dataSource: DataSource,
    private readonly issuer: string,
    private readonly encryption: KeyEncryption,
    private readonly marks?: SigningKeyMarks,
    private readonly environment?: DeploymentEnvironment,
  ) {
    this.states = marks?.states;
  }

  /** `environment`: the deployment's APP_ENV, which every access token it signs names (`env`). */
  static async load(
    dataSource: DataSource,
    issuer: string,
    encryption: KeyEncryption,
    marks?: SigningKeyMarks,
    environment?: DeploymentEnvironment,
  ): Promise<TokenSigner> {
    const signer = new TokenSigner(dataSource, issuer, encryption, marks, environment);
    await dataSource.transaction(async (tx) => {
      await lockKeys(tx);
      const repo = tx.getRepository(SigningKeyEntity);
      if (!(await repo.count({ where: { retiredAt: IsNull() } }))) await repo.save(await newSigningKey(encryption));
      // Rows written before keys were encrypted are encrypted in place.
      for (const row of await repo.find()) {
        if (!KeyEncryption.isEncrypted(row.privateKeyPem))
          await repo.update({ kid: row.kid }, { privateKeyPem: encryption.encrypt(row.kid, row.privateKeyPem) });
      }
    });
    await signer.reload();
    return signer;
  }

  /** Marks a key in Redis, inside the change's transaction: when Redis fails, nothing changes (503). */
  private async mark(kid: string, state: SigningKeyState): Promise<void> {
    try {
      await this.states?.mark(kid, state);
    } catch {
      throw errors.unavailable('Redis is unreachable: the signing keys were not changed; retry shortly');
    }
  }

  /**
   * Puts back marks Redis lost (restarted empty, flushed), so the edges never fall back to their
   * cached JWKS for a retired key. A `retired` mark is never turned back to `live`.
   */
  private async restoreMarks(): Promise<void> {
    if (!this.states) return;
    const rows = await this.dataSource.getRepository(SigningKeyEntity).find({ select: { kid: true, retiredAt: true } });
    for (const row of rows) {
      const state = await this.states.stateUncached(row.kid);
      if (row.retiredAt && state !== 'retired') await this.states.mark(row.kid, 'retired');
      else if (!row.retiredAt && state === null) await this.states.mark(row.kid, 'live');
    }
  }

  /** Reads the live keys again: the newest signs, all are published. */
  async reload(): Promise<void> {
    await this.loadKeys(this.marks ? await this.marks.states.version(this.marks.namespace) : null);
  }

  /** Reads the key set, under `version` (read before it, so a change during the read makes the next use read again). */
  private async loadKeys(version: string | null): Promise<void> {
    const load = ++this.loadsStarted;
    const live = await this.dataSource
      .getRepository(SigningKeyEntity)
      .find({ where: { retiredAt: IsNull() }, order: { createdAt: 'DESC', kid: 'ASC' } });
    const newest = live[0];
    if (!newest) throw new Error('no live signing key');
    if (load > this.loadApplied) {
      this.loadApplied = load;
      if (this.active?.kid !== newest.kid)
        this.active = { kid: newest.kid, key: createPrivateKey(this.encryption.decrypt(newest.kid, newest.privateKeyPem)) };
      this.published = { keys: live.map((k) => ({ ...k.publicJwk, kid: k.kid, alg: 'ES256', use: 'sig' })) };
      this.loadedVersion = version;
    }
    await this.restoreMarks();
  }

  /**
   * Makes sure the keys in memory are the key set's current ones: reloads when the version in
   * Redis is not the one loaded, or the signing key is marked retired (its retirement is known
   * even if the version was lost). Two cached reads, no round trip while nothing changes.
   */
  private async current(): Promise<void> {
    if (!this.marks) return;
    const { states, namespace } = this.marks;
    const unavailable = () => errors.unavailable('The signing keys cannot be confirmed: Redis is unreachable; retry shortly');
    let version: string | null;
    let state: SigningKeyState | null;
    try {
      [version, state] = await Promise.all([states.version(namespace), states.state(this.active.kid)]);
    } catch {
      throw unavailable();
    }
    if (version === this.loadedVersion && state !== 'retired') return;
    if (this.reloading?.version !== version) {
      const done: Promise<void> = this.loadKeys(version).finally(() => {
        if (this.reloading?.done === done) this.reloading = undefined;
      });
      this.reloading = { version, done };
    }
    await this.reloading.done;
    let after: SigningKeyState | null;
    try {
      after = await states.state(this.active.kid);
    } catch {
      throw unavailable();
    }
    // Only a mark written by someone other than auth can name the newest live key retired: sign nothing with it.
    if (after === 'retired') throw errors.unavailable('The newest signing key is marked retired in Redis; nothing is signed with it');
  }

  /** Tells every instance, once a change of the key set has committed, to reload before it next signs. */
  private async announce(): Promise<void> {
    if (!this.marks) return;
    try {
      await this.marks.states.announceChange(this.marks.namespace);
    } catch {
      // The change stands (it committed); only the other instances' early notice was lost.
      throw errors.unavailable(
        'The signing keys were changed, but Redis is unreachable: the other instances take the change within AUTH_SIGNING_KEY_RELOAD_MS',
      );
    }
  }

  /** Reloads every `intervalMs` until `stop`; a failed reload keeps the keys loaded. */
  startRefreshing(intervalMs: number, logger: Logger): void {
    this.refreshing ??= startPeriodic('reloading the signing keys', intervalMs, () => this.reload(), logger);
  }

  async stop(): Promise<void> {
    await this.refreshing?.stop();
    this.refreshing = undefined;
  }

  /** The keys as last loaded (use `currentJwks` to serve them). */
  jwks(): { keys: Record<string, unknown>[] } {
    return this.published;
  }

  /** The live keys, the key set's current ones (reloaded first after a change on any instance). */
  async currentJwks(): Promise<{ keys: Record<string, unknown>[] }> {
    await this.current();
    return this.published;
  }

  async list(): Promise<SigningKeyView[]> {
    const rows = await this.dataSource.getRepository(SigningKeyEntity).find({ order: { createdAt: 'DESC', kid: 'ASC' } });
    const activeKid = rows.find((r) => !r.retiredAt)?.kid;
    return rows.map((r) => ({
      kid: r.kid,
      createdAt: r.createdAt.toISOString(),
      retiredAt: r.retiredAt?.toISOString() ?? null,
      status: r.retiredAt ? 'RETIRED' : r.kid === activeKid ? 'ACTIVE' : 'PUBLISHED',
    }));
  }

  /** A new key that signs from now on, on every instance (each reloads before it next signs). */
  async rotate(): Promise<SigningKeyView> {
    const fresh = await newSigningKey(this.encryption);
    // Published as live before it commits, so no instance signs with a key the edges do not yet accept.
    const key = await this.dataSource.transaction(async (tx) => {
      await lockKeys(tx);
      const saved = await tx.getRepository(SigningKeyEntity).save(fresh);
      await this.mark(saved.kid!, 'live');
      return saved;
    });
    await this.announce();
    await this.reload();
    return (await this.list()).find((k) => k.kid === key.kid)!;
  }

  /** Stops publishing a key: tokens it signed no longer verify. The active key cannot be retired. */
  async retire(kid: string): Promise<SigningKeyView> {
    await this.dataSource.transaction(async (tx) => {
      await lockKeys(tx);
      const repo = tx.getRepository(SigningKeyEntity);
      const row = await repo.findOneBy({ kid });
      if (!row) throw errors.notFound('Signing key', 'kid');
      const newest = await repo.findOne({ where: { retiredAt: IsNull() }, order: { createdAt: 'DESC', kid: 'ASC' } });
      if (newest?.kid === kid)
        throw new AppError('CONFLICT', 'This is the active signing key: rotate first, then retire it', { field: 'kid' });
      if (!row.retiredAt) await repo.update({ kid }, { retiredAt: new Date() });
      await this.mark(kid, 'retired');
    });
    await this.announce();
    await this.reload();
    return (await this.list()).find((k) => k.kid === kid)!;
  }

  /**
   * Access token claims: sub, sid, kind, client_id | pat_id, scope, iat, exp, jti; PAT sessions also
   * carry their access (READ_ONLY | READ_WRITE) and IP list (`ip_allow`): the edges authorise
   * from the token alone, never from what Redis says. OAuth tokens: `sub` is the app's pairwise
   * subject, and `user_commitment` commits to the platform user id (see @trading/auth's user-commitment).
   * A token the user limited to chosen accounts lists them (`accounts`); the services reach no other.
   * Every token names the environment of the deployment that signed it (`env`: DEV, UAT or PROD),
   * so a service can tell a DEV token from a production one (the sandbox takes DEV tokens only).
   */
  async sign(
    claims: Pick<Claims, 'sub' | 'sid' | 'kind' | 'clientId' | 'patId' | 'scope' | 'access' | 'accounts'> & {
      ipAllowlist?: string[];
      jkt?: string;
      userCommitment?: string;
    },
    lifetimeSeconds: number,
  ): Promise<string> {
    await this.current();
    return new SignJWT({
      // RFC 9449 §6: a DPoP-bound token names its key by thumbprint; the edges then want a proof by it.
      ...(claims.jkt ? { cnf: { jkt: claims.jkt } } : {}),
      sid: claims.sid,
      kind: claims.kind,
      ...(claims.clientId ? { client_id: claims.clientId } : {}),
      ...(claims.patId ? { pat_id: claims.patId } : {}),
      ...(claims.access ? { access: claims.access } : {}),
      ...(claims.ipAllowlist?.length ? { ip_allow: claims.ipAllowlist } : {}),
      ...(claims.userCommitment ? { user_commitment: claims.userCommitment } : {}),
      ...(claims.accounts ? { accounts: claims.accounts } : {}),
      ...(this.environment ? { env: this.environment } : {}),
      scope: claims.scope.join(' '),
    })
      .setProtectedHeader({ alg: 'ES256', kid: this.active.kid, typ: ACCESS_TOKEN_TYPE })
      .setSubject(claims.sub)
      .setIssuer(this.issuer)
      .setAudience(ACCESS_TOKEN_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + lifetimeSeconds)
      .setJti(randomUUID())
      .sign(this.active.key);
  }

  /**
   * An OpenID Connect ID token (Core §2): signed with the same key as access tokens (same JWKS),
   * but `typ: JWT` and `aud` = the client, so no edge ever takes it for an access token.
   */
  async signIdToken(claims: Record<string, unknown>, subject: string, audience: string, lifetimeSeconds: number): Promise<string> {
    await this.current();
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: this.active.kid, typ: 'JWT' })
      .setIssuer(this.issuer)
      .setSubject(subject)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + lifetimeSeconds)
      .sign(this.active.key);
  }
}

/** Serialises every change of the key set (and its publication) across instances. */
async function lockKeys(tx: EntityManager): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('signing-keys'))");
}

async function newSigningKey(encryption: KeyEncryption): Promise<Partial<SigningKey>> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = randomUUID();
  return {
    kid,
    privateKeyPem: encryption.encrypt(kid, privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()),
    publicJwk: (await exportJWK(publicKey)) as unknown as Record<string, unknown>,
  };
}
