import { randomUUID, type KeyObject } from 'node:crypto';
import { assertReachesAccount, type Claims } from '@trading/auth';
import { eventSignatureProblem, followStream, signEvent, type DeliveredEvent, type EventLog, type EventSigners } from '@trading/events';
import type { Logger } from '@trading/logging';
import type { AccountsDirectory, OwnedAccount } from './index';

/**
 * Accounts' changes, passed on to services that cannot listen to accounts' database (the OMS).
 * Accounts hears its own table's NOTIFYs (its accounts cache) and appends each changed owner to a
 * capped stream that only accounts may write (Redis ACL), and, every second while it hears them,
 * a signed "listening" entry. The OMS remembers accounts between orders only while those entries
 * keep coming, and drops a user's accounts when a change names them.
 */
const ACCOUNT_CHANGED_EVENT = 'accounts.changed';
export const ACCOUNTS_LISTENING_EVENT = 'accounts.listening';
/** How often accounts says it is listening. */
const ACCOUNTS_LISTENING_INTERVAL_MS = 1000;
/** A reader that has not heard "listening" for this long answers nothing from memory. */
const ACCOUNTS_LISTENING_STALE_MS = 3000;
/** A signed "listening" older than this is not believed (a replay of an old entry), whatever the clocks. */
const LISTENING_MAX_AGE_MS = 30_000;
/** About this many entries are kept: changes are rare, "listening" one per second per accounts instance. */
const STREAM_MAX_LEN = 10_000;

/** What accounts' own NotifiedCache offers the announcer. */
export interface HeardChanges {
  /** Whether the database's notifications are being heard now (proved by the cache's probe). */
  readonly serving: boolean;
  /** Told each changed owner's id (`*`: every account changed). */
  onChange(listener: (userId: string) => void): void;
}

/** Accounts' side: passes every change it hears on, and says it is listening while it is. */
export class AccountChangesAnnouncer {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly heard: HeardChanges,
    private readonly log: EventLog,
    private readonly stream: string,
    private readonly signingKey: { kid: string; privateKey: KeyObject },
    private readonly logger: Logger,
    private readonly intervalMs = ACCOUNTS_LISTENING_INTERVAL_MS,
  ) {}

  start(): void {
    this.heard.onChange((userId) => this.append(ACCOUNT_CHANGED_EVENT, { userId }));
    this.timer = setInterval(() => {
      if (this.heard.serving) this.append(ACCOUNTS_LISTENING_EVENT, {});
    }, this.intervalMs);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
  }

  private append(type: string, payload: Record<string, unknown>): void {
    const event = signEvent({ eventId: randomUUID(), type, payload: { ...payload, at: Date.now() } }, this.signingKey);
    this.log.append(this.stream, event, { maxLen: STREAM_MAX_LEN }).catch((err: Error) => {
      // Readers then stop hearing "listening" and ask accounts every time: slower, never stale.
      this.logger.warn({ err, stream: this.stream }, 'could not announce an accounts change; the OMS will ask accounts on every order');
    });
  }
}

/**
 * The OMS's accounts: `find` answered from memory for an account it has seen, while accounts'
 * announcements are heard (a signed "listening" within ACCOUNTS_LISTENING_STALE_MS), and dropped
 * the moment accounts announces a change to its owner (restricted, closed). Ownership, type and
 * currency never change; status does, and is what the announcements are for. A sell (which
 * needs the holding), and every call while announcements are not heard, asks accounts. Only
 * accounts found are kept, for at most `maxEntries` users, each for at most `maxAgeMs`.
 */
export class RememberedAccounts implements AccountsDirectory {
  /** By owner, as announcements name them (oldest owner first): a lookup for another user finds nothing. */
  private readonly byUser = new Map<string, Map<string, { account: OwnedAccount; expires: number }>>();
  /** Counts drops: an answer read while one happened is not kept (it may predate the change). */
  private changes = 0;
  private heardAt = 0;
  private running = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly directory: AccountsDirectory,
    private readonly log: EventLog,
    private readonly stream: string,
    /** The services' public keys: "listening" must be signed by accounts. */
    private readonly signers: EventSigners,
    private readonly logger: Logger,
    private readonly maxEntries: number,
    private readonly maxAgeMs = 60_000,
  ) {}

  /** Follows the announcements (in the background; until heard, every call asks accounts). */
  start(): void {
    if (this.maxEntries <= 0 || this.running) return;
    this.running = true;
    this.loop = this.follow();
  }

  /** Whether answers come from memory now. */
  get serving(): boolean {
    return this.running && Date.now() - this.heardAt < ACCOUNTS_LISTENING_STALE_MS;
  }

  async find(accountId: string, claims: Claims, options: { symbol?: string; requestId?: string } = {}): Promise<OwnedAccount | null> {
    // What is remembered is per user, not per token: a token limited to chosen accounts is checked first.
    assertReachesAccount(claims, accountId);
    if (!this.serving) {
      this.forgetAll();
      return this.directory.find(accountId, claims, options);
    }
    if (!options.symbol) {
      const hit = this.byUser.get(claims.sub)?.get(accountId);
      if (hit && hit.expires > Date.now()) return hit.account;
    }
    const before = this.changes;
    const found = await this.directory.find(accountId, claims, options);
    if (found && this.serving && this.changes === before) this.remember(claims.sub, found);
    return found;
  }

  ownedIds(claims: Claims, requestId?: string): Promise<string[]> {
    return this.directory.ownedIds(claims, requestId);
  }

  heldSymbols(accountId: string, claims: Claims, requestId?: string): Promise<string[]> {
    return this.directory.heldSymbols ? this.directory.heldSymbols(accountId, claims, requestId) : Promise.resolve([]);
  }

  /** Asks accounts about this account from now on (closing it: its status is changing). */
  forgetAccount(accountId: string): void {
    this.changes += 1;
    // A back-office step, rare: a look through every owner is cheap enough.
    for (const [userId, accounts] of this.byUser) if (accounts.has(accountId)) this.forgetUser(userId);
  }

  async close(): Promise<void> {
    this.running = false;
    await this.loop;
    this.forgetAll();
    await this.directory.close();
  }

  private remember(userId: string, account: OwnedAccount): void {
    const { positionSettlement: _holding, ...kept } = account;
    let accounts = this.byUser.get(userId);
    if (!accounts) {
      this.byUser.set(userId, (accounts = new Map()));
      if (this.byUser.size > this.maxEntries) this.byUser.delete(this.byUser.keys().next().value!);
    }
    accounts.set(account.id, { account: kept, expires: Date.now() + this.maxAgeMs });
  }

  private forgetUser(userId: string): void {
    this.changes += 1;
    this.byUser.delete(userId);
  }

  private forgetAll(): void {
    if (!this.byUser.size) return;
    this.changes += 1;
    this.byUser.clear();
  }

  private follow(): Promise<void> {
    // From the stream's end: nothing is remembered yet, so nothing before now matters.
    return followStream(this.log, this.stream, {
      running: () => this.running,
      count: 500,
      onEntry: (entry) => this.heard(entry),
      onError: (err) => {
        // What was announced meanwhile may be lost: start again from nothing.
        this.heardAt = 0;
        this.forgetAll();
        this.logger.warn(
          { err, stream: this.stream },
          "reading accounts' announcements failed; asking accounts on every order until it is back",
        );
        return 'restart';
      },
    });
  }

  private heard(entry: DeliveredEvent): void {
    if (entry.type === ACCOUNT_CHANGED_EVENT) {
      // Signed or not: forgetting is always safe.
      const userId = entry.payload['userId'];
      if (typeof userId === 'string' && userId !== '*') this.forgetUser(userId);
      else this.forgetAll();
      return;
    }
    if (entry.type !== ACCOUNTS_LISTENING_EVENT) return;
    const problem = eventSignatureProblem(entry, this.signers, 'accounts');
    const at = Number(entry.payload['at']);
    if (problem || !(Math.abs(Date.now() - at) < LISTENING_MAX_AGE_MS)) {
      this.logger.warn({ problem: problem ?? 'too old', entryId: entry.entryId }, "an accounts 'listening' entry was not believed");
      return;
    }
    this.heardAt = Date.now();
  }
}
