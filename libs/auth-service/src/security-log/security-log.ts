import type { Request } from 'express';
import type { DataSource, EntityManager } from 'typeorm';
import { enqueueMail } from '../mail/outbox';
import { isoMinute } from '../web/dates';
import { texts } from '../web/texts';

/** What the security log records. */
type SecurityEventType =
  | 'sign_in'
  | 'passkey_sign_in'
  | 'pat_created'
  | 'pat_revoked'
  | 'app_connected'
  | 'app_disconnected'
  | 'password_reset'
  | 'factor_added'
  | 'factor_removed'
  | 'app_accounts_changed';

/** Sign-ins (with the password, or with a passkey alone): one from an address known to the account is not mailed. */
const SIGN_INS: readonly SecurityEventType[] = ['sign_in', 'passkey_sign_in'];

/** How long events are kept and shown, and what a known address is measured against. */
const SECURITY_LOG_DAYS = 90;
/** The most events one listing shows. */
export const SECURITY_LOG_LIMIT = 100;

/** Where a change came from: the request's address and user agent, and the page language its notice is written in. */
export interface EventContext {
  address?: string;
  userAgent?: string;
  /** The locale of the page the change was made on (English when made through the API). */
  locale?: string;
}

/**
 * A request's context: its client address (as the trusted proxies give it), its user agent, and
 * the language of its page (`/<locale>/…`; none for the API).
 */
export function requestContext(req: Request): EventContext {
  const locale = req.params['locale'];
  return { address: req.ip, userAgent: req.get('user-agent'), locale: typeof locale === 'string' ? locale : undefined };
}

/** A few small facts about an event, shown on the dashboard and in its notice: never a secret. */
type EventDetail = Record<string, string | boolean>;

export interface NewSecurityEvent {
  userId: string;
  type: SecurityEventType;
  context?: EventContext;
  app?: { clientId: string; name: string };
  detail?: EventDetail;
}

export interface SecurityEvent {
  id: string;
  type: SecurityEventType;
  occurredAt: Date;
  address: string | null;
  userAgent: string | null;
  app: { clientId: string; name: string } | null;
  detail: EventDetail;
}

const MAX_ADDRESS = 64;
const MAX_USER_AGENT = 512;
const MAX_APP_TEXT = 200;

const trimmed = (value: string | undefined, max: number) => {
  const t = value?.trim().slice(0, max);
  return t ? t : null;
};

/**
 * The user's security log and its notices. Each event is one row, written in the caller's
 * transaction together with its notice, queued in the mail outbox: the notice exists if and only
 * if the event does. A sign-in from an address the user signed in from in the last 90 days is
 * logged without a notice; every other event mails the user, in the language of the page it came
 * from. A notice names the token or the app, never a secret.
 */
export class SecurityLog {
  constructor(
    private readonly dataSource: DataSource,
    /** Auth's public address, for the "reset your password" link in a sign-in notice. */
    private readonly publicUrl: string,
    /** Called once a notice is queued: the dispatcher delivers it now rather than at its next pass. */
    private readonly queued: () => void = () => undefined,
  ) {}

  /**
   * Records the event in `manager`'s transaction and queues its notice there too, unless
   * `notify` is false (the change sends its own mail) or it is a sign-in from a known address.
   * Returns whether a notice was queued.
   */
  async record(manager: EntityManager, event: NewSecurityEvent, { notify = true }: { notify?: boolean } = {}): Promise<boolean> {
    const address = trimmed(event.context?.address, MAX_ADDRESS);
    const known =
      SIGN_INS.includes(event.type) &&
      (
        (await manager.query(
          `SELECT 1 FROM security_events WHERE user_id = $1 AND type = ANY($4) AND client_address IS NOT DISTINCT FROM $2
            AND occurred_at > now() - make_interval(days => $3) LIMIT 1`,
          [event.userId, address, SECURITY_LOG_DAYS, SIGN_INS],
        )) as unknown[]
      ).length > 0;
    const [row] = (await manager.query(
      `INSERT INTO security_events (user_id, type, client_address, user_agent, app_client_id, app_name, detail)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING occurred_at, (SELECT email FROM users WHERE id = $1) AS email`,
      [
        event.userId,
        event.type,
        address,
        trimmed(event.context?.userAgent, MAX_USER_AGENT),
        trimmed(event.app?.clientId, MAX_APP_TEXT),
        trimmed(event.app?.name, MAX_APP_TEXT),
        JSON.stringify(event.detail ?? {}),
      ],
    )) as Array<{ occurred_at: Date; email: string }>;
    if (!notify || known || !row) return false;
    const notice = noticeFor(event, event.context?.locale ?? 'en', isoMinute(row.occurred_at), this.publicUrl);
    await enqueueMail(manager, { to: row.email, ...notice });
    return true;
  }

  /** `record` in a transaction of its own, for a change that has none (made just before). */
  async recordAfter(event: NewSecurityEvent): Promise<boolean> {
    const mailed = await this.dataSource.transaction((tx) => this.record(tx, event));
    if (mailed) this.queued();
    return mailed;
  }

  /** Tells the dispatcher a notice was queued in a transaction that has committed. */
  wake(): void {
    this.queued();
  }

  /** The user's events of the last 90 days, newest first: at most `limit` (100). */
  async listForUser(userId: string, limit = SECURITY_LOG_LIMIT): Promise<SecurityEvent[]> {
    const rows: Array<{
      id: string;
      type: SecurityEventType;
      occurred_at: Date;
      client_address: string | null;
      user_agent: string | null;
      app_client_id: string | null;
      app_name: string | null;
      detail: EventDetail;
    }> = await this.dataSource.query(
      `SELECT id, type, occurred_at, client_address, user_agent, app_client_id, app_name, detail FROM security_events
        WHERE user_id = $1 AND occurred_at > now() - make_interval(days => $2)
        ORDER BY occurred_at DESC, id DESC LIMIT $3`,
      [userId, SECURITY_LOG_DAYS, Math.max(1, Math.min(limit, SECURITY_LOG_LIMIT))],
    );
    return rows.map((r) => ({
      id: r.id,
      type: r.type,
      occurredAt: r.occurred_at,
      address: r.client_address,
      userAgent: r.user_agent,
      app: r.app_client_id || r.app_name ? { clientId: r.app_client_id ?? '', name: r.app_name ?? '' } : null,
      detail: r.detail,
    }));
  }

  /** The app a grant belongs to (its client and name), for an event about that grant. */
  async appOfGrant(grantId: string): Promise<{ clientId: string; name: string } | undefined> {
    if (!/^[0-9a-f-]{36}$/i.test(grantId)) return undefined;
    const [row]: Array<{ client_id: string; app_name: string }> = await this.dataSource.query(
      'SELECT g.client_id, a.app_name FROM oauth_grants g JOIN vendor_apps a ON a.id = g.app_id WHERE g.id = $1',
      [grantId],
    );
    return row ? { clientId: row.client_id, name: row.app_name } : undefined;
  }
}

/** Deletes events older than the log keeps (the retention purge). */
export async function purgeSecurityEvents(dataSource: DataSource): Promise<unknown> {
  return dataSource.query('DELETE FROM security_events WHERE occurred_at < now() - make_interval(days => $1)', [SECURITY_LOG_DAYS]);
}

const text = (detail: EventDetail | undefined, key: string) => {
  const value = detail?.[key];
  return typeof value === 'string' ? value : '';
};

/** A second factor as a notice names it: its kind and the name the user gave it. */
function factorOf(detail: EventDetail | undefined, locale: string): string {
  const kinds = texts(locale).securityLog.factorKinds;
  const kind = text(detail, 'factor') === 'passkey' ? kinds.passkey : kinds.otp;
  const name = text(detail, 'factorName');
  return name ? `${kind} "${name}"` : kind;
}

type Mail = ReturnType<typeof texts>['securityLog']['mail'];
type Notice = { subject: string; body: string };
/** What a notice may say of its event: each value already in the notice's language. */
interface NoticeFacts {
  m: Mail;
  locale: string;
  when: string;
  address: string;
  app: string;
  token: { name: string; id: string; scope: string };
  detail: EventDetail | undefined;
  resetLink: string;
}

/** Each event's notice. */
const NOTICES: Record<SecurityEventType, (f: NoticeFacts) => Notice> = {
  sign_in: ({ m, address, when, resetLink }) => ({ subject: m.signInSubject, body: m.signInBody(address, when, resetLink) }),
  passkey_sign_in: (f) => NOTICES.sign_in(f),
  pat_created: ({ m, token, when, resetLink }) => ({
    subject: m.patCreatedSubject,
    body: m.patCreatedBody(token.name, token.id, token.scope, when, resetLink),
  }),
  pat_revoked: ({ m, token, when }) => ({ subject: m.patRevokedSubject, body: m.patRevokedBody(token.name, token.id, when) }),
  app_connected: ({ m, app, detail, when, resetLink }) => ({
    subject: m.appConnectedSubject(app),
    body: m.appConnectedBody(app, text(detail, 'scope'), when, resetLink),
  }),
  app_disconnected: ({ m, app, when }) => ({ subject: m.appDisconnectedSubject(app), body: m.appDisconnectedBody(app, when) }),
  app_accounts_changed: ({ m, app, detail, when, resetLink }) => ({
    subject: m.appAccountsSubject(app),
    body: m.appAccountsBody(app, text(detail, 'accounts'), when, resetLink),
  }),
  factor_added: ({ m, detail, locale, when, resetLink }) => ({
    subject: m.factorAddedSubject,
    body: m.factorAddedBody(factorOf(detail, locale), when, resetLink),
  }),
  factor_removed: ({ m, detail, locale, when, resetLink }) => ({
    subject: m.factorRemovedSubject,
    body: m.factorRemovedBody(factorOf(detail, locale), when, resetLink),
  }),
  // The same "your password was changed" mail a completed reset sends.
  password_reset: ({ locale, detail, when }) => {
    const reset = texts(locale).reset;
    return { subject: reset.changedSubject, body: reset.changedBody(when, detail?.['signedOutEverywhere'] === true) };
  },
};

/** The notice of one event, in `locale`: its subject and plain-text body. */
function noticeFor(event: NewSecurityEvent, locale: string, when: string, publicUrl: string): Notice {
  const m = texts(locale).securityLog.mail;
  return NOTICES[event.type]({
    m,
    locale,
    when,
    address: trimmed(event.context?.address, MAX_ADDRESS) ?? m.unknownAddress,
    app: event.app?.name ?? m.unknownApp,
    token: { name: text(event.detail, 'tokenName'), id: text(event.detail, 'tokenId'), scope: text(event.detail, 'scope') },
    detail: event.detail,
    resetLink: `${publicUrl}/${locale}/forgot-password`,
  });
}
