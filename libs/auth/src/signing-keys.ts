import { randomUUID } from 'node:crypto';
import type { KeyValueStore } from '@trading/redis';

export type SigningKeyState = 'live' | 'retired';

/**
 * One Redis key per signing key. Under `session:` because that is what the deployments' Redis
 * ACLs already let auth write and the edges read; `kid`s are random UUIDs, so platforms sharing a
 * Redis never see each other's marks, and no session id looks like this.
 */
const markKey = (kid: string) => `session:signing-key:${kid}`;
/** The key set's version, per deployment (`namespace`: its auth database), so platforms sharing a Redis keep theirs apart. */
const versionKey = (namespace: string) => `session:signing-keys-version:${namespace}`;

/**
 * What auth says of each signing key, in Redis. The edges cache verified tokens until they expire
 * and the JWKS for minutes; checking every token's `kid` here (answered from memory through Redis
 * client-side caching, invalidated the moment auth writes the mark) makes a retirement take effect
 * at every edge at once. A mark can only refuse (`retired`) or make an edge fetch the JWKS again
 * sooner (`live`): a token must still verify against the JWKS, so a mark forged in Redis grants nothing.
 */
export class SigningKeyStates {
  constructor(private readonly store: KeyValueStore) {}

  /** For a `kid` whose signature checked out: cached reads (a handful of keys, read on every request). */
  async state(kid: string): Promise<SigningKeyState | null> {
    return parse(await this.store.getCached(markKey(kid)));
  }

  /** For a `kid` no key of this edge matched (it may be anything a caller sent): never cached. */
  async stateUncached(kid: string): Promise<SigningKeyState | null> {
    return parse(await this.store.get(markKey(kid)));
  }

  /** Auth. Retirement is permanent and marks never expire (a handful of keys over a platform's life). */
  async mark(kid: string, state: SigningKeyState): Promise<void> {
    await this.store.set(markKey(kid), state);
  }

  /**
   * Auth: the version of the key set, a new random value after every rotation or retirement, read
   * by every auth instance before it signs or serves the JWKS (cached reads, invalidated by Redis
   * the moment it changes): one that differs from the version it loaded makes it reload first.
   */
  async version(namespace: string): Promise<string | null> {
    return this.store.getCached(versionKey(namespace));
  }

  /** Auth, once a change of the key set has committed: every instance reloads before it next signs. */
  async announceChange(namespace: string): Promise<void> {
    await this.store.set(versionKey(namespace), randomUUID());
  }
}

function parse(raw: string | null): SigningKeyState | null {
  return raw === 'live' || raw === 'retired' ? raw : null;
}
