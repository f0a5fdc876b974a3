import { createHmac, timingSafeEqual } from 'node:crypto';
import { swapResult, type KeyValueStore, type SwapResult, type SwapWrites } from './index';

const VERSION = 'v1';

/**
 * A store whose values carry a MAC over (key, value) with a key Redis never sees: for records
 * that grant something when read back (browser sessions, authorization codes, refresh tokens,
 * pending consents). A record written or changed by whoever holds Redis, or copied to another
 * key, reads as missing. Counters, sets and liveness markers pass through unsealed.
 */
export class SealedStore implements KeyValueStore {
  constructor(
    private readonly inner: KeyValueStore,
    private readonly secret: string,
    /** Told (with the key only) when a value fails its MAC: someone wrote to Redis who should not have. */
    private readonly onForgery: (key: string) => void = () => undefined,
  ) {}

  get kind() {
    return this.inner.kind;
  }

  private mac(key: string, value: string): string {
    return createHmac('sha256', this.secret).update(key).update('\n').update(value).digest('base64url');
  }

  seal(key: string, value: string): string {
    return `${VERSION}.${this.mac(key, value)}.${value}`;
  }

  /** The value, or null when it is not sealed for this key by this secret. */
  open(key: string, sealed: string): string | null {
    const [version, mac] = sealed.split('.', 2);
    const value = sealed.slice(`${version}.${mac}.`.length);
    const expected = Buffer.from(this.mac(key, value));
    const given = Buffer.from(mac ?? '');
    if (version !== VERSION || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      this.onForgery(key);
      return null;
    }
    return value;
  }

  async get(key: string): Promise<string | null> {
    return this.unsealed(key, await this.inner.get(key));
  }

  async getCached(key: string): Promise<string | null> {
    return this.unsealed(key, await this.inner.getCached(key));
  }

  private unsealed(key: string, raw: string | null): string | null {
    const found = swapResult(raw);
    if (!raw || !found) return null;
    const value = this.open(key, found.value);
    if (value === null) return null;
    // Keep the spent mark for callers that look for reuse (swapResult).
    return raw.slice(0, raw.length - found.value.length) + value;
  }

  set(key: string, value: string, ttlSeconds?: number): Promise<void> {
    return this.inner.set(key, this.seal(key, value), ttlSeconds);
  }

  setIfAbsent(key: string, value: string, ttlSeconds: number): Promise<boolean> {
    return this.inner.setIfAbsent(key, this.seal(key, value), ttlSeconds);
  }

  async swap(oldKey: string, newKey: string, value: string, ttlSeconds: number, also: SwapWrites = {}): Promise<SwapResult | null> {
    const values = also.values?.map((v) => (v.sealed ? { ...v, value: this.seal(v.key, v.value) } : v));
    const result = await this.inner.swap(oldKey, newKey, this.seal(newKey, value), ttlSeconds, { ...also, values });
    if (!result) return null;
    const opened = this.open(oldKey, result.value);
    return opened === null ? null : { ...result, value: opened };
  }

  del(...keys: string[]) {
    return this.inner.del(...keys);
  }
  revoke(...keys: string[]) {
    return this.inner.revoke(...keys);
  }
  addToSet(key: string, member: string, ttlSeconds: number) {
    return this.inner.addToSet(key, member, ttlSeconds);
  }
  members(key: string) {
    return this.inner.members(key);
  }
  hit(key: string, windowSeconds: number) {
    return this.inner.hit(key, windowSeconds);
  }
  ping() {
    return this.inner.ping();
  }
  close() {
    return this.inner.close();
  }
}
