import type { DataSource } from 'typeorm';
import type { SessionStore } from '@trading/auth';
import { errors } from '@trading/errors';
import { queryPrepared, type NotifiedCache, type PreparedStatement } from '@trading/db';
import { returnedRows } from '../registry/sql';

export type RevokeReason = 'USER' | 'CLIENT' | 'CODE_REUSED' | 'REFRESH_TOKEN_REUSED' | 'APP_SUSPENDED';

/** One user's consent to one app: what the authorization code and every refresh of it hang on. */
export interface GrantRecord {
  id: string;
  userId: string;
  appId: string;
  clientId: string;
  scope: string[];
}

/** A grant row: the durable truth about one consent. */
export interface StoredGrant extends GrantRecord {
  /** The accounts the user chose for the app; null (a grant from before the choice existed): all of the user's. */
  accountIds: string[] | null;
  createdAt: Date;
  activatedAt: Date | null;
  revokedAt: Date | null;
}

/**
 * Whether what Redis said about a grant (in a code's or refresh token's record) is exactly what
 * PostgreSQL holds, for this client: a record forged or altered in Redis names another user, a
 * wider scope or another app, and is refused.
 */
export function sameGrant(stored: StoredGrant, claimed: GrantRecord, clientId: string): boolean {
  const sameScope = claimed.scope.length === stored.scope.length && claimed.scope.every((s) => stored.scope.includes(s));
  return (
    stored.userId === claimed.userId &&
    stored.appId === claimed.appId &&
    stored.clientId === claimed.clientId &&
    stored.clientId === clientId &&
    sameScope
  );
}

/** One app the user allowed, whatever the number of grants (each connection is one): the dashboard's row. */
export interface AuthorisedApp {
  /** The newest grant: the row's revoke button names it, and revoking it ends every grant of the app. */
  grantId: string;
  grantIds: string[];
  appId: string;
  appName: string;
  logoUrl: string;
  homepageUrl: string;
  scope: string[];
  /** The accounts the app may reach (the newest grant's); null: all of the user's. */
  accountIds: string[] | null;
  grantedAt: Date;
  lastUsedAt: Date | null;
}

/**
 * Grants live in PostgreSQL (the durable record and the dashboard's list); their access tokens
 * are sessions in Redis indexed by grant, so revoking a grant ends them all on the next request.
 */
/** How fresh a grant's "last used" time is kept (the dashboard shows it to the minute). */
const LAST_USED_RESOLUTION_SECONDS = 60;

/** Read on every refresh (prepared: planned once per connection). */
const GRANT_BY_ID: PreparedStatement = {
  name: 'grant-by-id',
  text: 'SELECT id, user_id, app_id, client_id, scope, account_ids, created_at, activated_at, revoked_at FROM oauth_grants WHERE id = $1',
};

/** The grant is live; its last use noted, at most once per LAST_USED_RESOLUTION_SECONDS. Run on every refresh. */
const TOUCH_IF_ACTIVE: PreparedStatement = {
  name: 'touch-grant-if-active',
  text: `WITH live AS (SELECT id, last_used_at FROM oauth_grants WHERE id = $1 AND revoked_at IS NULL),
              touched AS (
                UPDATE oauth_grants g SET last_used_at = now() FROM live
                 WHERE g.id = live.id AND g.revoked_at IS NULL
                   AND (live.last_used_at IS NULL OR live.last_used_at < now() - interval '${LAST_USED_RESOLUTION_SECONDS} seconds')
                RETURNING g.id)
         SELECT EXISTS (SELECT 1 FROM live) AS active`,
};

export class GrantService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly sessions: SessionStore,
    /** Grants this instance has read, kept current by the grants-changed trigger (each refresh reads one). */
    private readonly remembered?: Pick<NotifiedCache<StoredGrant | null>, 'get' | 'forget'>,
  ) {}

  /**
   * The user's consent, recorded when it is given (before its code exists); not active until the
   * code is redeemed. `accountIds`: the accounts the user ticked, the only ones its tokens reach.
   */
  async recordConsent(grant: GrantRecord, accountIds: string[]): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO oauth_grants (id, user_id, app_id, client_id, scope, account_ids) VALUES ($1, $2, $3, $4, $5, $6)`,
      [grant.id, grant.userId, grant.appId, grant.clientId, grant.scope, accountIds],
    );
    this.remembered?.forget(grant.id);
  }

  /** The grant as PostgreSQL knows it (or as this instance remembers it while nothing changed): what a code or refresh token claims is checked against this. */
  async find(grantId: string): Promise<StoredGrant | null> {
    if (!/^[0-9a-f-]{36}$/i.test(grantId)) return null;
    return this.remembered ? this.remembered.get(grantId, () => this.load(grantId)) : this.load(grantId);
  }

  private async load(grantId: string): Promise<StoredGrant | null> {
    const [row]: Array<{
      id: string;
      user_id: string;
      app_id: string;
      client_id: string;
      scope: string[];
      account_ids: string[] | null;
      created_at: Date;
      activated_at: Date | null;
      revoked_at: Date | null;
    }> = await queryPrepared(this.dataSource, GRANT_BY_ID, [grantId]);
    if (!row) return null;
    return {
      id: row.id,
      userId: row.user_id,
      appId: row.app_id,
      clientId: row.client_id,
      scope: row.scope,
      accountIds: row.account_ids,
      createdAt: row.created_at,
      activatedAt: row.activated_at,
      revokedAt: row.revoked_at,
    };
  }

  /** The code's one redemption: true for the first, false when the grant was activated or revoked already. */
  async activate(grantId: string): Promise<boolean> {
    const rows = returnedRows(
      await this.dataSource.query(
        `UPDATE oauth_grants SET activated_at = now() WHERE id = $1 AND activated_at IS NULL AND revoked_at IS NULL RETURNING id`,
        [grantId],
      ),
    );
    this.remembered?.forget(grantId);
    return rows.length > 0;
  }

  /**
   * True while the grant is live (and notes its use). Called after a new session is created:
   * a revocation that raced the issue either shows here or ran after the session was indexed
   * and ended it, so no session outlives a revocation.
   */
  async touchIfActive(grantId: string): Promise<boolean> {
    // "Last used" is shown to the minute: written at most once a minute, so a refresh is a read
    // (no row version, no WAL flush), not a commit, unless the minute has turned.
    const [row] = await queryPrepared<{ active: boolean }>(this.dataSource, TOUCH_IF_ACTIVE, [grantId]);
    return !!row?.active;
  }

  /**
   * Ends a grant and every token issued under it. `record` lets a reuse of a code revoke a
   * grant whose first redemption has not written its row yet (it then finds it revoked).
   */
  async revoke(grantId: string, reason: RevokeReason, record?: GrantRecord): Promise<void> {
    if (record) {
      await this.dataSource.query(
        `INSERT INTO oauth_grants (id, user_id, app_id, client_id, scope, revoked_at, revoked_reason) VALUES ($1, $2, $3, $4, $5, now(), $6)
         ON CONFLICT (id) DO UPDATE SET revoked_at = COALESCE(oauth_grants.revoked_at, now()), revoked_reason = COALESCE(oauth_grants.revoked_reason, $6)`,
        [record.id, record.userId, record.appId, record.clientId, record.scope, reason],
      );
    } else {
      await this.dataSource.query(`UPDATE oauth_grants SET revoked_at = now(), revoked_reason = $2 WHERE id = $1 AND revoked_at IS NULL`, [
        grantId,
        reason,
      ]);
    }
    this.remembered?.forget(grantId);
    await this.sessions.revokeGrant(grantId);
  }

  /**
   * The dashboard's revoke button: only the user's own grant ("not found" otherwise, so ids cannot
   * be probed). The dashboard shows an app once, so the button ends every live grant of the user
   * to that app, not only the one it names.
   */
  async revokeForUser(userId: string, grantId: string): Promise<void> {
    if (!/^[0-9a-f-]{36}$/i.test(grantId)) throw errors.notFound('Authorised app', 'grantId');
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `SELECT other.id FROM oauth_grants g JOIN oauth_grants other ON other.user_id = g.user_id AND other.app_id = g.app_id
        WHERE g.id = $1 AND g.user_id = $2 AND (other.id = g.id OR other.revoked_at IS NULL)`,
      [grantId, userId],
    );
    if (!rows.length) throw errors.notFound('Authorised app', 'grantId');
    for (const row of rows) await this.revoke(row.id, 'USER');
  }

  /**
   * The connected-apps page's account choice: every live grant of the user to the app of
   * `grantId` reaches `accountIds` from now on. The app's live access tokens end at once (they
   * name the old accounts); its refresh token stays good and its next refresh carries the new set.
   */
  async setAccountsForUser(userId: string, grantId: string, accountIds: string[]): Promise<void> {
    if (!/^[0-9a-f-]{36}$/i.test(grantId)) throw errors.notFound('Authorised app', 'grantId');
    const rows = returnedRows<{ id: string }>(
      await this.dataSource.query(
        `UPDATE oauth_grants other SET account_ids = $3
           FROM oauth_grants g
          WHERE g.id = $1 AND g.user_id = $2 AND other.user_id = g.user_id AND other.app_id = g.app_id AND other.revoked_at IS NULL
      RETURNING other.id`,
        [grantId, userId, accountIds],
      ),
    );
    if (!rows.length) throw errors.notFound('Authorised app', 'grantId');
    for (const row of rows) {
      this.remembered?.forget(row.id);
      await this.sessions.revokeGrant(row.id);
    }
  }

  /** Suspending an app ends every grant it holds. */
  async revokeForApp(appId: string): Promise<number> {
    return this.revokeWhere('app_id = $1', appId, 'APP_SUSPENDED');
  }

  /** Every grant of a user to any app ends, with its tokens (a password reset that signs out everywhere). */
  async revokeAllOfUser(userId: string): Promise<number> {
    return this.revokeWhere('user_id = $1', userId, 'USER');
  }

  private async revokeWhere(condition: 'app_id = $1' | 'user_id = $1', id: string, reason: RevokeReason): Promise<number> {
    const rows = returnedRows<{ id: string }>(
      await this.dataSource.query(
        `UPDATE oauth_grants SET revoked_at = now(), revoked_reason = $2 WHERE ${condition} AND revoked_at IS NULL RETURNING id`,
        [id, reason],
      ),
    );
    for (const row of rows) {
      this.remembered?.forget(row.id);
      await this.sessions.revokeGrant(row.id);
    }
    return rows.length;
  }

  async isActive(grantId: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(`SELECT 1 FROM oauth_grants WHERE id = $1 AND revoked_at IS NULL`, [grantId]);
    return rows.length > 0;
  }

  /** The apps the user allowed, one entry per app (newest first): its grants' scopes and accounts merged, first allowed, last used. */
  async listForUser(userId: string): Promise<AuthorisedApp[]> {
    const rows: Array<{
      id: string;
      app_id: string;
      app_name: string;
      logo_url: string;
      homepage_url: string;
      scope: string[];
      account_ids: string[] | null;
      created_at: Date;
      last_used_at: Date | null;
    }> = await this.dataSource.query(
      `SELECT g.id, g.app_id, a.app_name, a.logo_url, a.homepage_url, g.scope, g.account_ids, g.created_at, g.last_used_at
           FROM oauth_grants g JOIN vendor_apps a ON a.id = g.app_id
          WHERE g.user_id = $1 AND g.revoked_at IS NULL AND g.activated_at IS NOT NULL ORDER BY g.created_at DESC`,
      [userId],
    );
    const apps = new Map<string, AuthorisedApp>();
    for (const r of rows) {
      const seen = apps.get(r.app_id);
      if (!seen) {
        apps.set(r.app_id, {
          grantId: r.id,
          grantIds: [r.id],
          appId: r.app_id,
          appName: r.app_name,
          logoUrl: r.logo_url,
          homepageUrl: r.homepage_url,
          scope: [...r.scope],
          accountIds: r.account_ids && [...r.account_ids],
          grantedAt: r.created_at,
          lastUsedAt: r.last_used_at,
        });
        continue;
      }
      seen.grantIds.push(r.id);
      seen.scope.push(...r.scope.filter((s) => !seen.scope.includes(s)));
      // What the app reaches through any of its grants: all accounts if one of them is unlimited.
      seen.accountIds = seen.accountIds && r.account_ids && [...new Set([...seen.accountIds, ...r.account_ids])];
      if (r.created_at < seen.grantedAt) seen.grantedAt = r.created_at;
      if (r.last_used_at && (!seen.lastUsedAt || r.last_used_at > seen.lastUsedAt)) seen.lastUsedAt = r.last_used_at;
    }
    return [...apps.values()];
  }
}
