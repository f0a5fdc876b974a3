import { createHash, randomBytes } from 'node:crypto';
import type { GrantRecord } from './grants';

/**
 * Authorization codes and refresh tokens are opaque random strings; Redis keeps only their
 * SHA-256 (a read of Redis yields nothing usable) with the record they stand for.
 */
const digest = (token: string) => createHash('sha256').update(token).digest('base64url');
export const codeKey = (code: string) => `oauth-code:${digest(code)}`;
export const refreshKey = (token: string) => `oauth-refresh:${digest(token)}`;
/** What a refresh answered, kept (encrypted) for the retry window under the spent token's digest. */
export const refreshAnswerKey = (token: string) => `oauth-refresh-answer:${digest(token)}`;

/** 256 bits, base64url; the prefixes let secret scanners recognise leaked refresh tokens. */
export const newCode = () => randomBytes(32).toString('base64url');
export const newRefreshToken = () => `trt_${randomBytes(32).toString('base64url')}`;

/** A code, bound to its client, redirect URI and PKCE challenge (RFC 6749 §4.1.3, RFC 7636 §4.4). */
export interface CodeRecord {
  grant: GrantRecord;
  redirectUri: string;
  codeChallenge: string;
  /** OpenID Connect: the authorization request's nonce and the user's sign-in time (epoch seconds), for the id_token. */
  nonce?: string;
  authTime?: number;
  /** How the user signed in (`amr`: `pwd`, plus `otp` with a second factor), for the id_token and userinfo. */
  amr?: string[];
  /** RFC 9449 §10: the thumbprint of the DPoP key the code may be redeemed with only (dpop_jkt, or PAR's proof). */
  dpopJkt?: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** A refresh token: its grant (whose scope it keeps; RFC 6749 §6) and when it expires. */
export interface RefreshRecord {
  grant: GrantRecord;
  expiresAt: number;
  /**
   * DPoP (RFC 9449): the grant was exchanged with a proof, so every refresh carries one and its
   * access tokens are bound to the key that refresh proves. The refresh token itself is bound to
   * no key (§5: a confidential client's authentication already constrains it), so a client may
   * rotate its DPoP key without losing its users' grants.
   */
  dpop?: true;
  /** Records written before refresh tokens were unbound name the key instead; they count as `dpop`. */
  jkt?: string;
  /** OpenID Connect: when the user signed in for this grant (epoch seconds), the auth_time of ID tokens a refresh issues. */
  authTime?: number;
  /** How the user signed in for this grant (`amr`), kept for the ID tokens and userinfo of its refreshes. */
  amr?: string[];
}

/** Where userinfo finds how the user of an access token's session signed in (`amr`), for as long as the token lives. */
export const sessionAmrKey = (sid: string) => `oauth-session-amr:${sid}`;

/** Whether a refresh record's grant is a DPoP one. */
export const dpopGrant = (record: RefreshRecord) => record.dpop === true || record.jkt !== undefined;

/** Tokens that are not well-formed strings are never looked up. */
export const plausibleToken = (value: unknown): value is string =>
  typeof value === 'string' && value.length >= 20 && value.length <= 200 && /^[A-Za-z0-9._~-]+$/.test(value);
