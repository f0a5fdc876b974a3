import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import nodemailer from 'nodemailer';
import type { DataSource, EntityManager } from 'typeorm';
import type { Logger } from '@trading/logging';
import { startPeriodic, type PeriodicTask } from '@trading/service';

/** Where a secret goes in a mail body; substituted only at delivery, and only by SMTP. */
export const SECRET_PLACEHOLDER = '{{secret}}';

/** What the local mail log shows instead of a secret: a file on disk is no place for one. */
const SECRET_WITHHELD =
  '[withheld: secrets travel only by SMTP. It was shown once to whoever provisioned or rotated it; rotate it again to get a new one]';

export interface Mail {
  to: string;
  subject: string;
  /** Plain text; may contain SECRET_PLACEHOLDER once. */
  body: string;
  /** Kept in the outbox only until the mail is delivered, then erased. */
  secret?: string;
  /**
   * The secret may be written to the development mail log too: only for a short-lived,
   * single-use link (a password reset), never for a lasting credential such as a client secret.
   */
  revealInLog?: boolean;
}

export interface MailTransport {
  /** Only 'smtp' ever carries a secret. */
  readonly kind: 'smtp' | 'log';
  send(mail: { from: string; to: string; subject: string; text: string }): Promise<void>;
}

/**
 * Queues a mail in the same transaction as the change it reports (transactional outbox): the
 * credentials exist if and only if their mail is queued.
 */
export async function enqueueMail(manager: EntityManager, mail: Mail): Promise<void> {
  await manager.query('INSERT INTO email_outbox (to_address, subject, body, secret, reveal_in_log) VALUES ($1, $2, $3, $4, $5)', [
    mail.to,
    mail.subject,
    mail.body,
    mail.secret ?? null,
    mail.revealInLog ?? false,
  ]);
}

/** SMTP through nodemailer, e.g. `smtp://user:pass@smtp.example.com:587` or `smtps://…:465`. */
export function smtpTransport(url: string): MailTransport {
  const transporter = nodemailer.createTransport(url);
  return {
    kind: 'smtp',
    send: async (mail) => {
      await transporter.sendMail(mail);
    },
  };
}

/**
 * No SMTP configured (development only: UAT and PROD refuse to start without it): every mail
 * is appended to a local file only its owner can read, with any secret withheld.
 */
export function logTransport(file: string, logger: Logger): MailTransport {
  return {
    kind: 'log',
    send: async (mail) => {
      const text = `----- ${new Date().toISOString()}\nFrom: ${mail.from}\nTo: ${mail.to}\nSubject: ${mail.subject}\n\n${mail.text}\n\n`;
      await mkdir(dirname(file), { recursive: true, mode: 0o700 });
      await appendFile(file, text, { mode: 0o600 });
      logger.info({ to: mail.to, subject: mail.subject, file }, 'e-mail written to the local mail log (no SMTP_URL set)');
    },
  };
}

interface PendingRow {
  id: string;
  to_address: string;
  subject: string;
  body: string;
  secret: string | null;
  reveal_in_log: boolean;
  attempts: number;
}

/**
 * Delivers the outbox: pending rows are claimed with SKIP LOCKED (several instances never send
 * one mail twice at once), sent, then marked sent with the secret erased. Failures are retried
 * with a growing delay. Each pass first runs the sources: work recorded elsewhere that becomes
 * mail out of band (password-reset requests).
 */
export class MailDispatcher {
  private task?: PeriodicTask;
  private running?: Promise<number>;
  private readonly sources: Array<() => Promise<unknown>> = [];

  constructor(
    private readonly dataSource: DataSource,
    private readonly transport: MailTransport,
    private readonly from: string,
    private readonly logger: Logger,
  ) {}

  /** Work that queues mail, run at the start of every pass. */
  addSource(source: () => Promise<unknown>): void {
    this.sources.push(source);
  }

  /**
   * Sends what is due; returns how many were delivered. A pass under way is waited for first, so
   * what was queued before this call is in the pass it returns (callers at once share one).
   */
  async runOnce(): Promise<number> {
    await this.running?.catch(() => undefined);
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  /** A pass now rather than at the next interval (nothing when the dispatcher is off: tests deliver by hand). */
  wake(): void {
    this.task?.wake();
  }

  private async pass(): Promise<number> {
    for (const source of this.sources)
      await source().catch((err: unknown) => this.logger.error({ err }, 'a mail source failed; the outbox is delivered anyway'));
    return this.deliver();
  }

  private async deliver(): Promise<number> {
    let delivered = 0;
    await this.dataSource.transaction(async (tx) => {
      const rows: PendingRow[] = await tx.query(
        `SELECT id, to_address, subject, body, secret, reveal_in_log, attempts FROM email_outbox
          WHERE sent_at IS NULL AND next_attempt_at <= now() ORDER BY id LIMIT 20 FOR UPDATE SKIP LOCKED`,
      );
      for (const row of rows) {
        try {
          const secret = this.transport.kind === 'smtp' || row.reveal_in_log ? row.secret : SECRET_WITHHELD;
          const text = row.secret === null ? row.body : row.body.replace(SECRET_PLACEHOLDER, secret ?? SECRET_WITHHELD);
          await this.transport.send({ from: this.from, to: row.to_address, subject: row.subject, text });
          await tx.query(
            'UPDATE email_outbox SET sent_at = now(), secret = NULL, attempts = attempts + 1, last_error = NULL WHERE id = $1',
            [row.id],
          );
          delivered++;
        } catch (err) {
          const delaySeconds = Math.min(3600, 30 * 2 ** Math.min(row.attempts, 7));
          this.logger.warn({ err, mailId: row.id }, 'e-mail delivery failed; will retry');
          await tx.query(
            `UPDATE email_outbox SET attempts = attempts + 1, last_error = $2, next_attempt_at = now() + make_interval(secs => $3) WHERE id = $1`,
            [row.id, String((err as Error).message ?? err).slice(0, 500), delaySeconds],
          );
        }
      }
    });
    return delivered;
  }

  start(intervalMs: number): void {
    if (intervalMs <= 0) return;
    this.task ??= startPeriodic('mail dispatcher', intervalMs, () => this.runOnce(), this.logger);
  }

  async stop(): Promise<void> {
    await this.task?.stop();
    this.task = undefined;
    await this.running?.catch(() => undefined);
  }
}
