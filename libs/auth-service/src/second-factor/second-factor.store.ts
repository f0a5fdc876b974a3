import type { DataSource } from '@trading/db';
import type { KeyEncryption } from '../keys/key-encryption';
import { hashSecret, secretMatches } from '../pat/pat-token';
import { returnedRows } from '../registry/sql';
import { PasskeyStore } from './passkey.store';
import { newRecoveryCode, newTotpSecret, normaliseRecoveryCode, totpStep } from './totp';

/** A confirmed authenticator app or a passkey, as the dashboard lists it (never a secret). */
export interface SecondFactor {
  id: string;
  kind: 'totp' | 'passkey';
  name: string;
  createdAt: Date;
  /** Passkeys only: when it last signed the user in or confirmed an action. */
  lastUsedAt?: Date | null;
}

/** One sign-in needs ten recovery codes at most: each works once. */
const RECOVERY_CODE_COUNT = 10;

/**
 * Users' second factors in auth's database. TOTP secrets are stored encrypted (AES-256-GCM under
 * a key derived from AUTH_KEY_ENCRYPTION_KEY, bound to the factor's row), so a copy of the
 * database computes no codes; recovery codes only as SHA-256 hashes, compared in constant time.
 */
export class SecondFactorStore {
  /** The user's passkeys: second factors too, and a sign-in of their own. */
  readonly passkeys: PasskeyStore;

  constructor(
    private readonly db: DataSource,
    private readonly encryption: KeyEncryption,
  ) {
    this.passkeys = new PasskeyStore(db);
  }

  /** The user's confirmed authenticator app, then the passkeys (none: sign-in asks for the password alone). */
  async list(userId: string): Promise<SecondFactor[]> {
    return [...(await this.apps(userId)), ...(await this.passkeys.list(userId)).map((k) => ({ ...k, kind: 'passkey' as const }))];
  }

  /** The confirmed authenticator app, if any (one at most). */
  async apps(userId: string): Promise<SecondFactor[]> {
    const rows: { id: string; kind: 'totp'; name: string; created_at: Date }[] = await this.db.query(
      `SELECT id, kind, name, created_at FROM second_factors WHERE user_id = $1 AND confirmed_at IS NOT NULL ORDER BY created_at`,
      [userId],
    );
    return rows.map((r) => ({ id: r.id, kind: r.kind, name: r.name, createdAt: new Date(r.created_at) }));
  }

  async enrolled(userId: string): Promise<boolean> {
    return (await this.list(userId)).length > 0;
  }

  /** Unused recovery codes left. */
  async recoveryCodesLeft(userId: string): Promise<number> {
    const [row]: { n: string }[] = await this.db.query(`SELECT count(*) AS n FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL`, [
      userId,
    ]);
    return Number(row?.n ?? 0);
  }

  /** A new, unconfirmed authenticator for the user (replacing any earlier unconfirmed one): its id and secret. */
  async begin(userId: string, name: string): Promise<{ id: string; secret: string }> {
    const secret = newTotpSecret();
    return this.db.transaction(async (tx) => {
      await tx.query(`DELETE FROM second_factors WHERE user_id = $1 AND confirmed_at IS NULL`, [userId]);
      const [{ id }]: { id: string }[] = await tx.query(
        `INSERT INTO second_factors (user_id, kind, name, secret_encrypted) VALUES ($1, 'totp', $2, 'pending') RETURNING id`,
        [userId, name],
      );
      await tx.query(`UPDATE second_factors SET secret_encrypted = $2 WHERE id = $1`, [id, this.encryption.encrypt(id, secret)]);
      return { id, secret };
    });
  }

  /** The unconfirmed authenticator being set up, if any. */
  async pending(userId: string): Promise<{ id: string; secret: string; name: string } | undefined> {
    const [row]: { id: string; name: string; secret_encrypted: string }[] = await this.db.query(
      `SELECT id, name, secret_encrypted FROM second_factors WHERE user_id = $1 AND confirmed_at IS NULL ORDER BY created_at DESC LIMIT 1`,
      [userId],
    );
    return row ? { id: row.id, name: row.name, secret: this.encryption.decrypt(row.id, row.secret_encrypted) } : undefined;
  }

  /**
   * Confirms the pending authenticator with its first code: it becomes the user's second factor
   * and ten new recovery codes replace any earlier ones. Returns the codes (the only time they
   * exist outside their hashes), or undefined when the code is wrong or nothing is pending.
   */
  async confirm(userId: string, code: string): Promise<string[] | undefined> {
    const pending = await this.pending(userId);
    if (!pending) return undefined;
    const step = await totpStep(pending.secret, code.trim());
    if (step === undefined) return undefined;
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    const done = await this.db.transaction(async (tx) => {
      const confirmed = returnedRows(
        await tx.query(
          `UPDATE second_factors SET confirmed_at = now(), last_time_step = $2
         WHERE id = $1 AND confirmed_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM second_factors WHERE user_id = $3 AND confirmed_at IS NOT NULL)
         RETURNING id`,
          [pending.id, step, userId],
        ),
      );
      if (!confirmed.length) return false;
      await tx.query(`DELETE FROM recovery_codes WHERE user_id = $1`, [userId]);
      for (const c of codes) await tx.query(`INSERT INTO recovery_codes (user_id, code_hash) VALUES ($1, $2)`, [userId, hashSecret(c)]);
      return true;
    });
    return done ? codes : undefined;
  }

  /**
   * Whether `input` is a current code of the user's authenticator not used before, or one of the
   * user's unused recovery codes; either is spent by this call. A code's time step is recorded
   * with a compare-and-set, so two requests with the same code cannot both pass.
   */
  async redeem(userId: string, input: string): Promise<'totp' | 'recovery' | undefined> {
    const text = input.trim();
    if (/^\d{6}$/.test(text)) return (await this.redeemTotp(userId, text)) ? 'totp' : undefined;
    const recovery = normaliseRecoveryCode(text);
    return recovery && (await this.redeemRecovery(userId, recovery)) ? 'recovery' : undefined;
  }

  private async redeemTotp(userId: string, code: string): Promise<boolean> {
    const [row]: { id: string; secret_encrypted: string; last_time_step: string | null }[] = await this.db.query(
      `SELECT id, secret_encrypted, last_time_step FROM second_factors WHERE user_id = $1 AND confirmed_at IS NOT NULL`,
      [userId],
    );
    if (!row) return false;
    const last = row.last_time_step === null ? undefined : Number(row.last_time_step);
    const step = await totpStep(this.encryption.decrypt(row.id, row.secret_encrypted), code, last);
    if (step === undefined) return false;
    const claimed = returnedRows(
      await this.db.query(
        `UPDATE second_factors SET last_time_step = $2 WHERE id = $1 AND (last_time_step IS NULL OR last_time_step < $2) RETURNING id`,
        [row.id, step],
      ),
    );
    return claimed.length === 1;
  }

  private async redeemRecovery(userId: string, code: string): Promise<boolean> {
    const rows: { id: string; code_hash: string }[] = await this.db.query(
      `SELECT id, code_hash FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL`,
      [userId],
    );
    // Every stored hash is compared (in constant time), so the answer's timing says nothing of which matched.
    const match = rows.filter((r) => secretMatches(code, r.code_hash))[0];
    if (!match) return false;
    const spent = returnedRows(
      await this.db.query(`UPDATE recovery_codes SET used_at = now() WHERE id = $1 AND used_at IS NULL RETURNING id`, [match.id]),
    );
    return spent.length === 1;
  }

  /** Removes the factor and the user's recovery codes: sign-in asks for the password alone again. */
  async remove(userId: string, factorId: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const removed = returnedRows(
        await tx.query(`DELETE FROM second_factors WHERE id = $1 AND user_id = $2 RETURNING id`, [factorId, userId]),
      );
      if (!removed.length) return false;
      await tx.query(`DELETE FROM recovery_codes WHERE user_id = $1`, [userId]);
      return true;
    });
  }
}
