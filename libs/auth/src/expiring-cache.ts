/**
 * A bounded map whose entries expire: for results that stay true until a known time (a verified
 * signature until the token's `exp`), so the hot path does the expensive work once. When full,
 * the oldest entries go first.
 */
export class ExpiringCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();

  constructor(private readonly maxEntries = 10_000) {}

  get(key: string, now = Date.now()): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: string, value: V, until: number): void {
    if (this.entries.size >= this.maxEntries) {
      for (const oldest of this.entries.keys()) {
        this.entries.delete(oldest);
        if (this.entries.size < this.maxEntries * 0.9) break;
      }
    }
    this.entries.set(key, { value, until });
  }
}
