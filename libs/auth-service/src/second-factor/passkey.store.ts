import type { DataSource } from '@trading/db';
import { returnedRows } from '../registry/sql';

/** A registered passkey, as the dashboard lists it. */
export interface Passkey {
  id: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** What verifying an assertion needs of a stored passkey. */
export interface StoredPasskey {
  id: string;
  userId: string;
  email: string;
  credentialId: string;
  publicKey: Uint8Array<ArrayBuffer>;
  counter: number;
  transports: string[];
  userHandle: string;
}

/** A passkey's name: the user's words, trimmed, at most 100 characters. */
export const MAX_PASSKEY_NAME = 100;

type Row = {
  id: string;
  user_id: string;
  email: string;
  credential_id: string;
  public_key: Buffer;
  counter: string;
  transports: string[];
  user_handle: string;
};

const stored = (r: Row): StoredPasskey => ({
  id: r.id,
  userId: r.user_id,
  email: r.email,
  credentialId: r.credential_id,
  publicKey: new Uint8Array(r.public_key),
  counter: Number(r.counter),
  transports: r.transports,
  userHandle: r.user_handle,
});

/** Users' passkeys in auth's database: public keys only (a copy of the table signs nothing). */
export class PasskeyStore {
  constructor(private readonly db: DataSource) {}

  async list(userId: string): Promise<Passkey[]> {
    const rows: { id: string; name: string; created_at: Date; last_used_at: Date | null }[] = await this.db.query(
      `SELECT id, name, created_at, last_used_at FROM passkeys WHERE user_id = $1 ORDER BY created_at, id`,
      [userId],
    );
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      createdAt: new Date(r.created_at),
      lastUsedAt: r.last_used_at && new Date(r.last_used_at),
    }));
  }

  async count(userId: string): Promise<number> {
    const [row]: { n: string }[] = await this.db.query(`SELECT count(*) AS n FROM passkeys WHERE user_id = $1`, [userId]);
    return Number(row?.n ?? 0);
  }

  /** The user's credentials: for the browser not to register one twice, and to choose among at the second step. */
  async credentialsOf(userId: string): Promise<{ id: string; transports: string[] }[]> {
    const rows: { credential_id: string; transports: string[] }[] = await this.db.query(
      `SELECT credential_id, transports FROM passkeys WHERE user_id = $1 ORDER BY created_at`,
      [userId],
    );
    return rows.map((r) => ({ id: r.credential_id, transports: r.transports }));
  }

  /** The passkey with this credential id (whoever's it is), with its user's e-mail. */
  async byCredentialId(credentialId: string): Promise<StoredPasskey | undefined> {
    if (!credentialId || credentialId.length > 1400) return undefined;
    const [row]: Row[] = await this.db.query(
      `SELECT p.id, p.user_id, u.email, p.credential_id, p.public_key, p.counter, p.transports, p.user_handle
         FROM passkeys p JOIN users u ON u.id = p.user_id WHERE p.credential_id = $1`,
      [credentialId],
    );
    return row ? stored(row) : undefined;
  }

  async add(
    userId: string,
    passkey: { credentialId: string; publicKey: Uint8Array; counter: number; transports: string[]; userHandle: string; name: string },
  ): Promise<string | undefined> {
    const rows: { id: string }[] = await this.db.query(
      `INSERT INTO passkeys (user_id, credential_id, public_key, counter, transports, user_handle, name)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (credential_id) DO NOTHING RETURNING id`,
      [userId, passkey.credentialId, Buffer.from(passkey.publicKey), passkey.counter, passkey.transports, passkey.userHandle, passkey.name],
    );
    return rows[0]?.id;
  }

  /**
   * Records a use: the new signature counter, set only if the stored one is still the one the
   * assertion was checked against (two requests with one assertion cannot both pass).
   */
  async used(passkey: StoredPasskey, newCounter: number): Promise<boolean> {
    const claimed = returnedRows(
      await this.db.query(`UPDATE passkeys SET counter = $3, last_used_at = now() WHERE id = $1 AND counter = $2 RETURNING id`, [
        passkey.id,
        passkey.counter,
        newCounter,
      ]),
    );
    return claimed.length === 1;
  }

  async rename(userId: string, id: string, name: string): Promise<boolean> {
    const renamed = returnedRows(
      await this.db.query(`UPDATE passkeys SET name = $3 WHERE id = $1 AND user_id = $2 RETURNING id`, [id, userId, name]),
    );
    return renamed.length === 1;
  }

  async remove(userId: string, id: string): Promise<boolean> {
    const removed = returnedRows(await this.db.query(`DELETE FROM passkeys WHERE id = $1 AND user_id = $2 RETURNING id`, [id, userId]));
    return removed.length === 1;
  }
}
