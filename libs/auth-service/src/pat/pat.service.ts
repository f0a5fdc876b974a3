import { randomUUID } from 'node:crypto';
import { IsNull, MoreThan, type DataSource, type Repository } from 'typeorm';
import { ipAllowed, isIpOrCidr, scopesForPatAccess, SessionStore, PAT_ACCESS, type PatAccess } from '@trading/auth';
import { AppError, errors } from '@trading/errors';
import type { TokenSigner } from '../keys/token-signer';
import { chosenAccounts, type UserAccounts } from '../users/user-accounts';
import { returnedRows } from '../registry/sql';
import type { EventContext, SecurityLog } from '../security-log/security-log';
import { PersonalAccessTokenEntity, type PersonalAccessToken } from './pat.entity';
import type { LoginFailureReason } from './login-attempt.entity';
import { hashSecret, mintPat, parsePat, secretMatches, TOKEN_ID_PATTERN } from './pat-token';

export interface NewPat {
  userId: string;
  name: string;
  access: string;
  /** Last day of validity, `YYYY-MM-DD` (UTC); the token works until the end of that day. */
  expires: string;
  ipAllowlist?: string[];
  /** The accounts the token reaches (ids of the user's accounts); none named: every account, those opened later included. */
  accountIds?: unknown;
  /** Where the request came from, for the security log and its notice. */
  context?: EventContext;
}

/** PAT_MAX_LIVE_PER_USER's default. */
const DEFAULT_MAX_LIVE_PATS_PER_USER = 50;

export class PatService {
  private readonly pats: Repository<PersonalAccessToken>;
  /**
   * `maxLivePerUser`: unrevoked, unexpired PATs one user may hold (each PAT is a budget of its
   * own at the edges; the cap bounds how many, and revoking or expiry frees a place).
   */
  constructor(
    private readonly dataSource: DataSource,
    private readonly signer: TokenSigner,
    private readonly sessions: SessionStore,
    private readonly sessionTtlSeconds: number,
    private readonly maxLivePerUser = DEFAULT_MAX_LIVE_PATS_PER_USER,
    /** Records creations and revocations in the owner's security log, which mails the owner. */
    private readonly securityLog?: SecurityLog,
    /** The user's accounts, which a token limited to chosen accounts must name from. */
    private readonly userAccounts?: Pick<UserAccounts, 'choosable'>,
  ) {
    this.pats = dataSource.getRepository(PersonalAccessTokenEntity);
  }

  /** Creates a PAT; the returned token string is the only time the secret exists outside the caller. */
  async create(input: NewPat, now = new Date()): Promise<{ token: string; pat: PersonalAccessToken }> {
    const name = input.name?.trim();
    if (!name || name.length > 100) throw errors.badInput('name', 'name is required (1-100 characters)');
    if (!(PAT_ACCESS as readonly string[]).includes(input.access)) throw errors.badInput('scope', 'scope must be READ_ONLY or READ_WRITE');
    const expiresAt = expiryFromDate(input.expires, now);
    const ipAllowlist = (input.ipAllowlist ?? []).map((ip) => ip.trim()).filter(Boolean);
    const badIp = ipAllowlist.find((ip) => !isIpOrCidr(ip));
    if (badIp) throw errors.badInput('ips', `"${badIp}" is not an IPv4/IPv6 address or CIDR range`);
    const accountIds = await this.accountIdsFor(input);

    const minted = mintPat();
    const pat = await this.dataSource.transaction(async (tx) => {
      // One creation per user at a time (released at commit), so concurrent ones cannot both pass the count.
      await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`pat-create:${input.userId}`]);
      const pats = tx.getRepository(PersonalAccessTokenEntity);
      const live = await pats.count({ where: { userId: input.userId, revokedAt: IsNull(), expiresAt: MoreThan(now) } });
      if (live >= this.maxLivePerUser)
        throw new AppError(
          'PAT_LIMIT_REACHED',
          `You have ${live} live personal access tokens; at most ${this.maxLivePerUser} live personal access tokens are allowed. Revoke one you no longer use.`,
          { field: 'tokens', details: { limit: this.maxLivePerUser } },
        );
      const saved = await pats.save(
        pats.create({
          id: minted.tokenId,
          userId: input.userId,
          name,
          secretHash: hashSecret(minted.secret),
          access: input.access as PatAccess,
          ipAllowlist,
          accountIds,
          expiresAt,
        }),
      );
      await this.securityLog?.record(tx, { userId: input.userId, type: 'pat_created', context: input.context, detail: patDetail(saved) });
      return saved;
    });
    this.securityLog?.wake();
    return { token: minted.token, pat };
  }

  /** The accounts a new token is limited to: null (every account) unless some are named, each one of the user's. */
  private async accountIdsFor(input: NewPat): Promise<string[] | null> {
    const named = input.accountIds;
    if (named === undefined || named === null || (Array.isArray(named) && !named.length)) return null;
    if (!this.userAccounts) throw new AppError('SERVICE_UNAVAILABLE', 'Tokens limited to chosen accounts cannot be created here');
    return chosenAccounts(named, await this.userAccounts.choosable(input.userId));
  }

  /**
   * Exchanges a PAT for a short-lived session JWT. A refusal carries its
   * reason for the record; callers must answer every refusal the same way.
   */
  async login(token: unknown, clientIp: string | undefined, now = new Date(), jkt?: string): Promise<PatLoginResult> {
    const parsed = parsePat(token);
    if (!parsed) return { ok: false, reason: 'MALFORMED' };
    const pat = await this.pats.findOneBy({ id: parsed.tokenId });
    const reason = !pat
      ? 'UNKNOWN_TOKEN'
      : !secretMatches(parsed.secret, pat.secretHash)
        ? 'WRONG_SECRET'
        : pat.revokedAt
          ? 'REVOKED'
          : pat.expiresAt <= now
            ? 'EXPIRED'
            : !ipAllowed(clientIp, pat.ipAllowlist)
              ? 'IP_NOT_ALLOWED'
              : undefined;
    if (!pat || reason) return { ok: false, reason: reason!, pat: pat ?? undefined };

    const sid = randomUUID();
    const scope = scopesForPatAccess(pat.access);
    // A session never outlives its PAT: expiry needs no job to run.
    const lifetime = Math.max(1, Math.min(this.sessionTtlSeconds, Math.floor((pat.expiresAt.getTime() - now.getTime()) / 1000)));
    const expiresAt = Math.floor(now.getTime() / 1000) + lifetime;
    await this.sessions.create({ sid, userId: pat.userId, kind: 'pat', patId: pat.id, expiresAt });
    // Written after the session exists and only while the PAT is unrevoked: a revocation that
    // raced this login either shows here (we drop the session) or ran revokePat after the
    // session was indexed (which ended it). Either way no session outlives a revocation.
    const still = await this.pats.update({ id: pat.id, revokedAt: IsNull() }, { lastUsedAt: now, lastUsedIp: clientIp ?? null });
    if (!still.affected) {
      await this.sessions.revoke(sid);
      return { ok: false, reason: 'REVOKED', pat };
    }
    const jwt = await this.signer.sign(
      {
        sub: pat.userId,
        sid,
        kind: 'pat',
        patId: pat.id,
        scope,
        access: pat.access,
        ipAllowlist: pat.ipAllowlist,
        ...(pat.accountIds ? { accounts: pat.accountIds } : {}),
        jkt,
      },
      lifetime,
    );
    return { ok: true, pat, session: { userId: pat.userId, token: jwt } };
  }

  /** The owner of a token id, if it exists (for recording attempts that never got as far as login). */
  async ownerOf(tokenId: string): Promise<string | undefined> {
    return (await this.pats.findOne({ where: { id: tokenId }, select: { userId: true } }))?.userId;
  }

  listForUser(userId: string): Promise<PersonalAccessToken[]> {
    return this.pats.find({ where: { userId }, order: { createdAt: 'DESC', id: 'DESC' } });
  }

  /**
   * Revocation is immediate. PostgreSQL stops new logins; the session store ends
   * every live session in every instance. Repeating it changes nothing. Someone else's token
   * is "not found", so ids cannot be probed.
   */
  async revoke(userId: string, tokenId: unknown, now = new Date(), context?: EventContext): Promise<PersonalAccessToken> {
    if (typeof tokenId !== 'string' || !TOKEN_ID_PATTERN.test(tokenId))
      throw errors.badInput('tokenId', 'tokenId must be a token id like tpat_0123456789abcdef');
    const pat = await this.pats.findOneBy({ id: tokenId, userId });
    if (!pat) throw errors.notFound('Personal access token', 'tokenId');
    if (!pat.revokedAt) {
      const revoked = await this.pats.update({ id: pat.id, revokedAt: IsNull() }, { revokedAt: now });
      pat.revokedAt = (await this.pats.findOneByOrFail({ id: pat.id })).revokedAt;
      // Logged once, by the revocation that took effect.
      if (revoked.affected) await this.securityLog?.recordAfter({ userId, type: 'pat_revoked', context, detail: patDetail(pat) });
    }
    await this.sessions.revokePat(pat.id);
    return pat;
  }

  /**
   * Revokes every live PAT of a user at once (a password reset that signs out everywhere): new
   * logins stop in PostgreSQL and every live session ends in the store, as with `revoke`.
   */
  async revokeAllOfUser(userId: string, now = new Date()): Promise<number> {
    const rows = returnedRows<{ id: string }>(
      await this.dataSource.query(
        'UPDATE personal_access_tokens SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL RETURNING id',
        [userId, now],
      ),
    );
    for (const row of rows) await this.sessions.revokePat(row.id);
    return rows.length;
  }
}

export type PatLoginResult =
  | { ok: true; pat: PersonalAccessToken; session: { userId: string; token: string } }
  | { ok: false; reason: LoginFailureReason; pat?: PersonalAccessToken };

/** What the security log notes about a token: its name, id and scope, never its secret. */
const patDetail = (pat: PersonalAccessToken) => ({
  tokenName: pat.name,
  tokenId: pat.id,
  scope: pat.access,
  ...(pat.accountIds ? { accounts: String(pat.accountIds.length) } : {}),
});

/** The expiry must lie between now and one year from the creation day. */
function expiryFromDate(value: string, now: Date): Date {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value))
    throw errors.badInput('expires', 'expires must be a date, YYYY-MM-DD');
  const day = new Date(`${value}T00:00:00.000Z`);
  if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== value)
    throw errors.badInput('expires', `expires must be a calendar date (${value} is not one)`);
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const oneYear = new Date(Date.UTC(now.getUTCFullYear() + 1, now.getUTCMonth(), now.getUTCDate()));
  if (day < today) throw new AppError('UNPROCESSABLE', 'expires must not be in the past', { field: 'expires' });
  if (day > oneYear)
    throw new AppError('UNPROCESSABLE', `expires must be at most one year from today (${oneYear.toISOString().slice(0, 10)})`, {
      field: 'expires',
    });
  return new Date(day.getTime() + 24 * 3600 * 1000); // valid through the end of that UTC day
}
