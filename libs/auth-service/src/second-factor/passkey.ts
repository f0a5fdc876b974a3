import { createHash, randomBytes } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Request, Response } from 'express';
import type { KeyValueStore } from '@trading/redis';
import { clearCookie, readCookie, setCookie } from '../web/cookies';
import type { PasskeyStore, StoredPasskey } from './passkey.store';

/** The site passkeys belong to: auth's own public address (its issuer). */
export interface RelyingParty {
  /** The registrable domain (the issuer's host name). */
  id: string;
  /** The only origin a browser may sign from (the issuer's scheme, host and port). */
  origin: string;
  name: string;
}

export const relyingPartyOf = (publicUrl: string, name: string): RelyingParty => {
  const url = new URL(publicUrl);
  return { id: url.hostname, origin: url.origin, name };
};

/** What a challenge was issued for: adding a passkey, a sign-in (with or without the password first), confirming an action. */
type Purpose = 'register' | 'sign-in' | 'second-step' | 'step-up';
interface Challenge {
  challenge: string;
  purpose: Purpose;
  /** The user it was issued to: none for a sign-in without the password (the passkey says who). */
  userId?: string;
  /** Registration: the user handle the new credential holds. */
  userHandle?: string;
}

const COOKIE = 'tapi_passkey';
/** A browser has five minutes to answer a challenge; it is then gone, and answered at most once. */
const CHALLENGE_TTL_SECONDS = 300;
const TIMEOUT_MS = 120_000;
const key = (id: string) => `passkey-challenge:${createHash('sha256').update(id).digest('base64url')}`;

/**
 * Challenges live server-side, in Redis under a hash of a random cookie only this browser holds,
 * one at a time per browser, for five minutes. Taking one deletes it: an answer (even a right
 * one) counts once, so a captured assertion cannot be sent again.
 */
class Challenges {
  constructor(private readonly store: KeyValueStore) {}

  async issue(req: Request, res: Response, challenge: Challenge): Promise<void> {
    const old = readCookie(req, COOKIE);
    if (old && old.length <= 64) await this.store.del(key(old));
    const id = randomBytes(32).toString('base64url');
    await this.store.set(key(id), JSON.stringify(challenge), CHALLENGE_TTL_SECONDS);
    setCookie(req, res, COOKIE, id, CHALLENGE_TTL_SECONDS);
  }

  async take(req: Request, res: Response, purpose: Purpose): Promise<Challenge | undefined> {
    const id = readCookie(req, COOKIE);
    if (!id || id.length > 64) return undefined;
    clearCookie(req, res, COOKIE);
    const raw = await this.store.get(key(id));
    if (!raw || (await this.store.del(key(id))) !== 1) return undefined;
    const challenge = JSON.parse(raw) as Challenge;
    return challenge.purpose === purpose ? challenge : undefined;
  }
}

/** Why an answer was refused (for the log; the browser hears only that it was). */
export type Refusal = 'no-challenge' | 'unknown-credential' | 'other-user' | 'invalid' | 'replayed';

const TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);

/**
 * Passkeys with @simplewebauthn/server: registration and authentication options (challenges kept
 * server-side) and the checks of the browser's answers against this site's RP ID and origin.
 * Passkeys are discoverable (resident) credentials; user verification is preferred.
 */
export class Passkeys {
  private readonly challenges: Challenges;

  constructor(
    readonly store: PasskeyStore,
    challengeStore: KeyValueStore,
    private readonly rp: RelyingParty,
  ) {
    this.challenges = new Challenges(challengeStore);
  }

  async registrationOptions(
    req: Request,
    res: Response,
    user: { id: string; email: string },
  ): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const userHandle = randomBytes(32);
    const options = await generateRegistrationOptions({
      rpName: this.rp.name,
      rpID: this.rp.id,
      userName: user.email,
      userID: new Uint8Array(userHandle),
      timeout: TIMEOUT_MS,
      attestationType: 'none',
      excludeCredentials: await this.knownCredentials(user.id),
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'preferred' },
    });
    await this.challenges.issue(req, res, {
      challenge: options.challenge,
      purpose: 'register',
      userId: user.id,
      userHandle: userHandle.toString('base64url'),
    });
    return options;
  }

  /** Checks the new credential and stores it under `name`: its id, or why not. */
  async register(
    req: Request,
    res: Response,
    userId: string,
    response: unknown,
    name: string,
  ): Promise<{ id: string } | { refused: Refusal }> {
    const expected = await this.challenges.take(req, res, 'register');
    if (!expected || expected.userId !== userId || !expected.userHandle) return { refused: 'no-challenge' };
    let verified;
    try {
      verified = await verifyRegistrationResponse({
        response: response as RegistrationResponseJSON,
        expectedChallenge: expected.challenge,
        expectedOrigin: this.rp.origin,
        expectedRPID: this.rp.id,
        requireUserVerification: false,
      });
    } catch {
      return { refused: 'invalid' };
    }
    if (!verified.verified) return { refused: 'invalid' };
    const { credential } = verified.registrationInfo;
    const id = await this.store.add(userId, {
      credentialId: credential.id,
      publicKey: credential.publicKey,
      counter: credential.counter,
      transports: (credential.transports ?? []).filter((t) => TRANSPORTS.has(t)),
      userHandle: expected.userHandle,
      name,
    });
    return id ? { id } : { refused: 'invalid' };
  }

  /**
   * Options for an assertion: for `userId`'s passkeys (second step, step-up), or, without a
   * user, for any passkey of this site the browser holds (a sign-in by passkey alone).
   */
  async authenticationOptions(
    req: Request,
    res: Response,
    purpose: Exclude<Purpose, 'register'>,
    userId?: string,
  ): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const options = await generateAuthenticationOptions({
      rpID: this.rp.id,
      timeout: TIMEOUT_MS,
      userVerification: 'preferred',
      ...(userId ? { allowCredentials: await this.knownCredentials(userId) } : {}),
    });
    await this.challenges.issue(req, res, { challenge: options.challenge, purpose, ...(userId ? { userId } : {}) });
    return options;
  }

  /**
   * Checks an assertion against the challenge this browser was given for `purpose` (taken: it
   * counts once), the passkey it names, this site's RP ID and origin. With `forUser` (the user
   * who gave the password, or the session's), the challenge must have been issued to that user
   * and the passkey must be theirs. The passkey, or why not.
   */
  async authenticate(
    req: Request,
    res: Response,
    purpose: Exclude<Purpose, 'register'>,
    response: unknown,
    forUser?: string,
  ): Promise<{ passkey: StoredPasskey } | { refused: Refusal }> {
    const expected = await this.challenges.take(req, res, purpose);
    // A challenge issued for another sign-in (another user's password given since) answers nothing here.
    if (!expected || expected.userId !== forUser) return { refused: 'no-challenge' };
    const answer = response as Partial<AuthenticationResponseJSON> | undefined;
    const passkey = typeof answer?.id === 'string' ? await this.store.byCredentialId(answer.id) : undefined;
    if (!passkey) return { refused: 'unknown-credential' };
    // A second step or a step-up is for the user who gave the password or holds the session: their passkey only.
    if (forUser !== undefined && passkey.userId !== forUser) return { refused: 'other-user' };
    const handle = answer?.response?.userHandle;
    if (handle && handle !== passkey.userHandle) return { refused: 'other-user' };
    let verified;
    try {
      verified = await verifyAuthenticationResponse({
        response: answer as AuthenticationResponseJSON,
        expectedChallenge: expected.challenge,
        expectedOrigin: this.rp.origin,
        expectedRPID: this.rp.id,
        credential: {
          id: passkey.credentialId,
          publicKey: passkey.publicKey,
          counter: passkey.counter,
          transports: passkey.transports as AuthenticatorTransport[],
        },
        // Alone (no password), the passkey must also have checked who holds it (PIN or biometrics).
        requireUserVerification: purpose === 'sign-in',
      });
    } catch {
      return { refused: 'invalid' };
    }
    if (!verified.verified) return { refused: 'invalid' };
    if (!(await this.store.used(passkey, verified.authenticationInfo.newCounter))) return { refused: 'replayed' };
    return { passkey };
  }

  private async knownCredentials(userId: string) {
    return (await this.store.credentialsOf(userId)).map((c) => ({ id: c.id, transports: c.transports as AuthenticatorTransport[] }));
  }
}
