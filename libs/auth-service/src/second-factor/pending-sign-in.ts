import { createHash, randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { KeyValueStore } from '@trading/redis';
import { clearCookie, readCookie, setCookie } from '../web/cookies';

const COOKIE = 'tapi_signin_2fa';
/** Between a right password and the second factor: five minutes, then the password again. */
const PENDING_SIGN_IN_TTL_SECONDS = 300;

/** A sign-in whose password was right, waiting for the second factor. It grants nothing by itself. */
export interface PendingSignIn {
  userId: string;
  email: string;
  /** Where to go once signed in (a path on this site). */
  next?: string;
}

const key = (id: string) => `signin-second-factor:${createHash('sha256').update(id).digest('base64url')}`;

/**
 * Half-signed-in browsers: a random cookie naming a record in Redis (under a hash of the cookie,
 * sealed, for five minutes). Only that browser holds the cookie, and it is no session: every
 * page that needs one still finds none until the second factor is given.
 */
export class PendingSignIns {
  constructor(private readonly store: KeyValueStore) {}

  async begin(req: Request, res: Response, pending: PendingSignIn): Promise<void> {
    await this.end(req, res);
    const id = randomBytes(32).toString('base64url');
    await this.store.set(key(id), JSON.stringify(pending), PENDING_SIGN_IN_TTL_SECONDS);
    setCookie(req, res, COOKIE, id, PENDING_SIGN_IN_TTL_SECONDS);
  }

  async find(req: Request): Promise<PendingSignIn | undefined> {
    const id = readCookie(req, COOKIE);
    const raw = id && id.length <= 64 ? await this.store.get(key(id)) : null;
    return raw ? (JSON.parse(raw) as PendingSignIn) : undefined;
  }

  /** Claims the record: deleting it is what counts, so one half-signed-in browser becomes at most one session. */
  async finish(req: Request, res: Response): Promise<boolean> {
    const id = readCookie(req, COOKIE);
    clearCookie(req, res, COOKIE);
    return !!id && id.length <= 64 && (await this.store.del(key(id))) === 1;
  }

  async end(req: Request, res: Response): Promise<void> {
    const id = readCookie(req, COOKIE);
    if (id && id.length <= 64) await this.store.del(key(id));
    if (id) clearCookie(req, res, COOKIE);
  }
}
