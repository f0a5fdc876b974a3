import { createHmac, randomBytes } from 'node:crypto';

/**
 * An OAuth access token is a JWT its client can read, so it names the user only by that app's
 * pairwise subject; the platform user id rides in it as a commitment: HMAC-SHA256 of the user id
 * under a random key that is new for every token and kept only with its session in Redis. An edge
 * that reads the session finds the user id there and checks it against the signed commitment.
 * The client cannot read the user id out of its token (it never sees the key), two apps'
 * tokens for one user share nothing, and a session record forged in Redis names no other user
 * (it would have to open a commitment auth signed).
 */
export const newUserCommitmentKey = (): string => randomBytes(32).toString('base64url');

export const userCommitment = (key: string, userId: string): string =>
  createHmac('sha256', Buffer.from(key, 'base64url')).update(userId).digest('base64url');
