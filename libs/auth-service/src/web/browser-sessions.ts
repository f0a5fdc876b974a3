import { createHash, randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { KeyValueStore } from '@trading/redis';
import { clearCookie, readCookie, setCookie } from './cookies';

const SESSION_COOKIE = 'tapi_session';

export interface BrowserSession {
  userId: string;
  email: string;
  /** Synchronizer token: every form of this session carries it, every POST must echo it. */
  csrf: string;
  createdAt: number;
  /** How the user signed in (OpenID Connect `amr`): `pwd`, plus `otp` or `hwk` once a second factor was given; `hwk` alone for a passkey sign-in. */
  amr?: AuthMethod[];
  /** When a second factor was last given in this session (epoch ms): at sign-in, or to confirm an action. */
  secondFactorAt?: number;
}

export type AuthMethod = 'pwd' | 'otp' | 'hwk';

/** A second factor given this long ago still confirms an action that needs one (a READ_WRITE token). */
const STEP_UP_WINDOW_SECONDS = 600;

/** Whether the session's second factor was given recently enough to confirm an action now. */
export const recentSecondFactor = (session: BrowserSession, now = Date.now()) =>
  session.secondFactorAt !== undefined && now - session.secondFactorAt <= STEP_UP_WINDOW_SECONDS * 1000;

/** The session's `amr`: sessions written before it was recorded were password sign-ins. */
export const authMethods = (session: BrowserSession): AuthMethod[] => session.amr ?? ['pwd'];

/** The signed-in browser of a request, if any (set by `load`). */
export const browserOf = (res: Response): { id: string; session: BrowserSession } | undefined => res.locals['browser'];

const randomId = () => randomBytes(32).toString('base64url');
/** Only a hash of the cookie is a key in Redis, so a read of Redis yields no usable cookie. */
const key = (id: string) => `browser-session:${createHash('sha256').update(id).digest('base64url')}`;
/** When every browser session of a user was ended (a password reset): sessions started before it are void. */
const endedKey = (userId: string) => `browser-sessions-ended:${userId}`;

/** Dashboard sign-in sessions: an opaque random cookie, the state in Redis with a time to live. */
export class BrowserSessions {
  constructor(
    private readonly store: KeyValueStore,
    readonly ttlSeconds: number,
  ) {}

  /** Always a new id at sign-in, so a cookie planted before sign-in (fixation) is worthless. */
  async start(
    req: Request,
    res: Response,
    user: { id: string; email: string },
    how: { otp?: boolean; amr?: AuthMethod[] } = {},
  ): Promise<BrowserSession> {
    // Signing in again (an app asked for a fresh sign-in) ends the session it replaces.
    const previous = readCookie(req, SESSION_COOKIE);
    if (previous && previous.length <= 64) await this.store.del(key(previous));
    const id = randomId();
    const now = Date.now();
    const amr: AuthMethod[] = how.amr ?? (how.otp ? ['pwd', 'otp'] : ['pwd']);
    const session: BrowserSession = {
      userId: user.id,
      email: user.email,
      csrf: randomId(),
      createdAt: now,
      amr,
      ...(amr.some((m) => m !== 'pwd') ? { secondFactorAt: now } : {}),
    };
    await this.store.set(key(id), JSON.stringify(session), this.ttlSeconds);
    setCookie(req, res, SESSION_COOKIE, id, this.ttlSeconds);
    return session;
  }

  /** A second factor was just given in the request's session: recorded on it, for the rest of its life (no longer). */
  async confirmSecondFactor(res: Response, method: 'otp' | 'hwk' = 'otp'): Promise<void> {
    const browser = browserOf(res);
    if (!browser) return;
    const now = Date.now();
    const amr: AuthMethod[] = [...new Set([...authMethods(browser.session), method])];
    const session: BrowserSession = { ...browser.session, amr, secondFactorAt: now };
    const left = Math.ceil((session.createdAt + this.ttlSeconds * 1000 - now) / 1000);
    if (left <= 0) return;
    await this.store.set(key(browser.id), JSON.stringify(session), left);
    res.locals['browser'] = { id: browser.id, session };
  }

  async end(req: Request, res: Response): Promise<void> {
    const id = readCookie(req, SESSION_COOKIE);
    if (id) await this.store.del(key(id));
    clearCookie(req, res, SESSION_COOKIE);
  }

  /**
   * Signs the user out of every browser at once (after a password reset). Sessions are keyed by
   * a hash of their cookie, not by user, so this records the moment instead: every session
   * started before it is void, and removed when next seen. The mark lives as long as a session can.
   */
  async endAllFor(userId: string): Promise<void> {
    await this.store.set(endedKey(userId), String(Date.now()), this.ttlSeconds);
  }

  /** Middleware: finds the request's session, if its cookie names a live one. */
  load() {
    return async (req: Request, res: Response, next: NextFunction) => {
      try {
        const id = readCookie(req, SESSION_COOKIE);
        const raw = id && id.length <= 64 ? await this.store.get(key(id)) : null;
        if (id && raw) {
          const session = JSON.parse(raw) as BrowserSession;
          const ended = await this.store.get(endedKey(session.userId));
          if (ended && session.createdAt <= Number(ended)) await this.store.del(key(id));
          else res.locals['browser'] = { id, session };
        }
        next();
      } catch (err) {
        next(err);
      }
    };
  }
}
