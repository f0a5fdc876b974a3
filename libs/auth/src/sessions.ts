import type { KeyValueStore, SwapWrites } from '@trading/redis';

/**
 * Live session state, shared by every service instance through Redis. A token whose `sid`
 * has no live record here is refused, which is what makes revocation immediate. The record
 * says only that the session is live and whose it is: what the caller may do (scope, access,
 * IP list) comes from the signed access token, and whose it is must match what the token signs
 * (its `sub`, or for OAuth its user commitment), so a record forged in Redis grants nothing.
 */
export interface SessionRecord {
  sid: string;
  userId: string;
  kind: 'oauth' | 'pat';
  patId?: string;
  clientId?: string;
  /** OAuth sessions: the grant (consent) they were issued under; revoking it ends them all. */
  grantId?: string;
  /** OAuth sessions: the key of the access token's user commitment (user-commitment.ts), which names `userId`. */
  userKey?: string;
  /** Epoch seconds. */
  expiresAt: number;
}

const sessionKey = (sid: string) => `session:${sid}`;
const patSessionsKey = (patId: string) => `pat-sessions:${patId}`;
const grantSessionsKey = (grantId: string) => `grant-sessions:${grantId}`;
/** Written by the edges the first time they accept a session's token (the only key they may write besides limits). */
const sessionUsedKey = (sid: string) => `session-used:${sid}`;

export class SessionStore {
  /** `store`: also where the edges read which signing keys are retired (SigningKeyStates). */
  constructor(readonly store: KeyValueStore) {}

  async create(record: SessionRecord): Promise<void> {
    const { values, members } = this.creation(record);
    await Promise.all([
      ...values.map((v) => this.store.set(v.key, v.value, v.ttlSeconds)),
      ...members.map((m) => this.store.addToSet(m.key, m.member, m.ttlSeconds)),
    ]);
  }

  /**
   * The writes that create a session: the record and its index (by PAT, by grant: revoking either
   * ends every session made from it), sent together; callers check the PAT or grant is still live
   * only after both are written. A refresh sends them with its token swap (`KeyValueStore.swap`),
   * to this store's Redis.
   */
  creation(record: SessionRecord): Required<SwapWrites> {
    const ttlSeconds = Math.max(1, record.expiresAt - Math.floor(Date.now() / 1000));
    const indexes = [record.patId && patSessionsKey(record.patId), record.grantId && grantSessionsKey(record.grantId)];
    return {
      values: [{ key: sessionKey(record.sid), value: JSON.stringify(record), ttlSeconds }],
      members: indexes.filter((key): key is string => !!key).map((key) => ({ key, member: record.sid, ttlSeconds })),
    };
  }

  /** The live record, or null once revoked or expired; answered from memory where the store caches reads (the edges). */
  async get(sid: string): Promise<SessionRecord | null> {
    const raw = await this.store.getCached(sessionKey(sid));
    return raw ? (JSON.parse(raw) as SessionRecord) : null;
  }

  /**
   * Notes that a session's access token has been used (by the edge that first accepts it). An
   * OAuth client that has used the tokens a refresh gave it has moved on: a retry of that
   * refresh from then on is a thief's, not the client's (auth's refresh grant reads this).
   */
  async markUsed(sid: string, expiresAt: number): Promise<void> {
    await this.store.set(sessionUsedKey(sid), '1', Math.max(1, expiresAt - Math.floor(Date.now() / 1000)));
  }

  async wasUsed(sid: string): Promise<boolean> {
    return (await this.store.get(sessionUsedKey(sid))) !== null;
  }

  async revoke(sid: string): Promise<void> {
    await this.store.revoke(sessionKey(sid));
  }

  /** Ends every session created from one PAT; harmless to repeat. */
  async revokePat(patId: string): Promise<number> {
    const sids = await this.store.members(patSessionsKey(patId));
    return this.store.revoke(...sids.map(sessionKey), patSessionsKey(patId));
  }

  /** Ends every access-token session of one OAuth grant; harmless to repeat. */
  async revokeGrant(grantId: string): Promise<number> {
    const sids = await this.store.members(grantSessionsKey(grantId));
    return this.store.revoke(...sids.map(sessionKey), grantSessionsKey(grantId));
  }
}
