import { randomUUID } from 'node:crypto';
import type { DataSource, Repository } from 'typeorm';
import { ipAllowed, isIpOrCidr, scopesForPatAccess, SessionStore, PAT_ACCESS, type PatAccess } from '@trading/auth';
import { AppError, errors } from '@trading/errors';
import type { TokenSigner } from '../keys/token-signer';
import { PersonalAccessTokenEntity, type PersonalAccessToken } from './pat.entity';
import { hashSecret, mintPat, parsePat, secretMatches } from './pat-token';

export interface NewPat {
  userId: string;
  name: string;
  access: string;
  /** Last day of validity, `YYYY-MM-DD` (UTC); the token works until the end of that day. */
  expires: string;
  ipAllowlist?: string[];
}

/** One uniform answer for every failed login, so a caller learns nothing about why. */
const loginRefused = () => errors.unauthenticated('Invalid personal access token');

export class PatService {
  private readonly pats: Repository<PersonalAccessToken>;
  constructor(
    dataSource: DataSource,
    private readonly signer: TokenSigner,
    private readonly sessions: SessionStore,
    private readonly sessionTtlSeconds: number,
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

    const minted = mintPat();
    const pat = await this.pats.save(
      this.pats.create({ id: minted.tokenId, userId: input.userId, name, secretHash: hashSecret(minted.secret), access: input.access as PatAccess, ipAllowlist, expiresAt }),
    );
    return { token: minted.token, pat };
  }

  /** Spec §5.2 step 2: exchanges a PAT for a short-lived session JWT. */
  async login(token: unknown, clientIp: string | undefined): Promise<{ userId: string; token: string }> {
    const parsed = parsePat(token);
    if (!parsed) throw loginRefused();
    const pat = await this.pats.findOneBy({ id: parsed.tokenId });
    const now = new Date();
    if (!pat || !secretMatches(parsed.secret, pat.secretHash) || pat.revokedAt || pat.expiresAt <= now || !ipAllowed(clientIp, pat.ipAllowlist)) {
      throw loginRefused();
    }
    const sid = randomUUID();
    const scope = scopesForPatAccess(pat.access);
    // A session never outlives its PAT: expiry needs no job to run.
    const lifetime = Math.max(1, Math.min(this.sessionTtlSeconds, Math.floor((pat.expiresAt.getTime() - now.getTime()) / 1000)));
    const expiresAt = Math.floor(now.getTime() / 1000) + lifetime;
    await this.sessions.create({ sid, userId: pat.userId, kind: 'pat', patId: pat.id, scope, access: pat.access, ipAllowlist: pat.ipAllowlist, expiresAt });
    await this.pats.update({ id: pat.id }, { lastUsedAt: now, lastUsedIp: clientIp ?? null });
    const jwt = await this.signer.sign({ sub: pat.userId, sid, kind: 'pat', patId: pat.id, scope }, lifetime);
    return { userId: pat.userId, token: jwt };
  }
}

/** Spec §2.5: the expiry must lie between now and one year from the creation day. */
export function expiryFromDate(value: string, now: Date): Date {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) throw errors.badInput('expires', 'expires must be a date, YYYY-MM-DD');
  const day = new Date(`${value}T00:00:00.000Z`);
  if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== value) throw errors.badInput('expires', `${value} is not a calendar date`);
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const oneYear = new Date(Date.UTC(now.getUTCFullYear() + 1, now.getUTCMonth(), now.getUTCDate()));
  if (day < today) throw new AppError('UNPROCESSABLE', 'expires must not be in the past', { field: 'expires' });
  if (day > oneYear) throw new AppError('UNPROCESSABLE', `expires must be at most one year from today (${oneYear.toISOString().slice(0, 10)})`, { field: 'expires' });
  return new Date(day.getTime() + 24 * 3600 * 1000); // valid through the end of that UTC day
}
