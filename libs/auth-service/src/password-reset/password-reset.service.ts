import { createHash, randomBytes } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { enqueueMail, SECRET_PLACEHOLDER } from '../mail/outbox';
import type { EventContext, SecurityLog } from '../security-log/security-log';
import { isoMinute } from '../web/dates';
import { texts } from '../web/texts';
import { hashPassword, normaliseEmail } from '../users/users.service';

export interface PasswordResetSettings {
  /** A link's lifetime (30 minutes by default). */
  ttlSeconds: number;
  /** Auth's public address ({login_url}): links are built from configuration, never from a request's Host header. */
  publicUrl: string;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
/** 32 random bytes, base64url: 43 characters. */
const RESET_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Password reset by e-mail. The link's token is random, kept only as a hash,
 * short-lived and spent by its first use. Asking for one only records the request, the same
 * write for any address, and answers; the account lookup, the token and the mail come after, out
 * of band (`issuePending`, run by the mail dispatcher), so the answer neither waits on nor
 * reveals whether the account exists.
 */
export class PasswordResets {
  constructor(
    private readonly dataSource: DataSource,
    private readonly settings: PasswordResetSettings,
    /** Called once a request is recorded: the dispatcher picks it up now rather than at its next pass. */
    private readonly recorded: () => void = () => undefined,
    /** A completed reset is recorded in the user's security log (its notice is the "password changed" mail). */
    private readonly securityLog?: SecurityLog,
  ) {}

  get minutes(): number {
    return Math.round(this.settings.ttlSeconds / 60);
  }

  /** Records a request for a link to `email`: one insert, whatever the address. */
  async request(email: string, locale: string): Promise<void> {
    await this.dataSource.query('INSERT INTO password_reset_requests (email, locale) VALUES ($1, $2)', [normaliseEmail(email), locale]);
    this.recorded();
  }

  /**
   * Turns recorded requests into links: each claimed with SKIP LOCKED (instances never handle
   * one twice), its link and mail queued when the address is an account's, then deleted.
   * Returns how many requests were handled.
   */
  async issuePending(): Promise<number> {
    let handled = 0;
    for (;;) {
      const done = await this.dataSource.transaction(async (tx) => {
        const rows: Array<{ id: string; email: string; locale: string }> = await tx.query(
          'SELECT id, email, locale FROM password_reset_requests ORDER BY id LIMIT 20 FOR UPDATE SKIP LOCKED',
        );
        for (const row of rows) await this.issue(tx, row.email, row.locale);
        if (rows.length) await tx.query('DELETE FROM password_reset_requests WHERE id = ANY($1)', [rows.map((r) => r.id)]);
        return rows.length;
      });
      handled += done;
      if (done < 20) return handled;
    }
  }

  /** Queues a link for `email` if it is an account's: the token row and its mail are inserted only when the user exists. */
  private async issue(tx: EntityManager, email: string, locale: string): Promise<void> {
    const token = randomBytes(32).toString('base64url');
    const t = texts(locale).reset;
    const link = `${this.settings.publicUrl}/${locale}/reset-password?token=${token}`;
    await tx.query(
      `WITH u AS (SELECT id, email FROM users WHERE email = $1),
            t AS (INSERT INTO password_reset_tokens (token_hash, user_id, expires_at)
                  SELECT $2, id, now() + make_interval(secs => $3) FROM u RETURNING user_id)
       INSERT INTO email_outbox (to_address, subject, body, secret, reveal_in_log)
       SELECT u.email, $4, $5, $6, true FROM u JOIN t ON t.user_id = u.id`,
      [email, hashToken(token), this.settings.ttlSeconds, t.mailSubject, t.mailBody(SECRET_PLACEHOLDER, this.minutes), link],
    );
  }

  /** Is this a live, unused link? (The page asks before showing the form.) */
  async isLive(token: string): Promise<boolean> {
    if (!RESET_TOKEN_PATTERN.test(token)) return false;
    const rows: unknown[] = await this.dataSource.query(
      'SELECT 1 FROM password_reset_tokens WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()',
      [hashToken(token)],
    );
    return rows.length > 0;
  }

  /**
   * Spends the link and sets the password, in one transaction: the first use claims the token
   * (a second, concurrent one finds it used), every other open link of the user is spent too,
   * and a "your password was changed" mail is queued, saying whether every token was revoked
   * with it (`revokedAll`). Null when the link is not live.
   */
  async complete(
    token: string,
    password: string,
    locale: string,
    revokedAll: boolean,
    context?: EventContext,
  ): Promise<{ userId: string; email: string } | null> {
    if (!RESET_TOKEN_PATTERN.test(token)) return null;
    const passwordHash = await hashPassword(password);
    return this.dataSource.transaction(async (tx) => {
      const [claimed] = (await tx.query(
        `UPDATE password_reset_tokens SET used_at = now()
          WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING user_id`,
        [hashToken(token)],
      )) as [Array<{ user_id: string }>, number];
      const userId = claimed[0]?.user_id;
      if (!userId) return null;
      await tx.query('UPDATE password_reset_tokens SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [userId]);
      const [users] = (await tx.query('UPDATE users SET password_hash = $2 WHERE id = $1 RETURNING email', [userId, passwordHash])) as [
        Array<{ email: string }>,
        number,
      ];
      const email = users[0]!.email;
      const t = texts(locale).reset;
      await enqueueMail(tx, { to: email, subject: t.changedSubject, body: t.changedBody(isoMinute(new Date()), revokedAll) });
      await this.securityLog?.record(
        tx,
        { userId, type: 'password_reset', context: { ...context, locale }, detail: { signedOutEverywhere: revokedAll } },
        { notify: false },
      );
      return { userId, email };
    });
  }
}
