import { randomUUID } from 'node:crypto';
import { errors } from '@trading/errors';
import { RedisStore, type KeyValueStore } from '@trading/redis';

/**
 * Takes a slot when fewer than ARGV[1] live ones are held: each slot is a member of the holder's
 * sorted set, scored with the time its lease ends (Redis's clock, the same for every instance);
 * lapsed leases are dropped first. 1 when taken, 0 when all are held.
 */
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + lease, ARGV[2])
redis.call('PEXPIRE', KEYS[1], lease)
return 1`;

/** Extends the leases of the slots ARGV[2..] (in the sets KEYS[1..]) by ARGV[1] ms from now. */
const RENEW_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now + lease, ARGV[i + 1])
  redis.call('PEXPIRE', key, lease)
end
return #KEYS`;

export interface HeldSlotsRule {
  /** Part of every key, e.g. `order-streams`. */
  name: string;
  /** Slots one holder may hold at once, over every instance. */
  max: number;
  /**
   * How long a slot outlives the instance holding it if that instance dies without giving it
   * back: each instance renews the leases of the slots it holds every third of this.
   */
  leaseMs: number;
}

/**
 * At most `max` things held at once per holder (open event streams per user), counted in Redis
 * over every instance of a service, so adding instances, or spreading connections over them,
 * buys a holder no more. Each slot is a lease its instance renews while it holds it and gives
 * back when done; an instance that dies stops renewing, and its slots lapse within `leaseMs`, so
 * they never keep their holder out for longer. On the in-process store (the all-in-one without
 * Redis) the count is this process's, which is the whole deployment there.
 */
export class HeldSlots {
  /** Slots this instance holds: slot id → the key of its holder's set. */
  private readonly held = new Map<string, string>();
  /** The in-process count (no Redis): key → slot id → when its lease ends. */
  private readonly local = new Map<string, Map<string, number>>();
  private renewing: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: KeyValueStore,
    private readonly namespace: string,
    readonly rule: HeldSlotsRule,
  ) {}

  /** The Redis key of `holder`'s slots (a user id: an id of ours, never text a caller chose). */
  storeKey(holder: string): string {
    return `ratelimit:${this.namespace}:${this.rule.name}:${holder}`;
  }

  /** Takes one of `holder`'s slots: its id, or undefined when all are held. 503 when Redis cannot answer. */
  async take(holder: string): Promise<string | undefined> {
    const key = this.storeKey(holder);
    const id = randomUUID();
    if (this.store instanceof RedisStore) {
      let reply: unknown;
      try {
        reply = await this.store.client.eval(TAKE_SCRIPT, {
          keys: [key],
          arguments: [String(this.rule.max), id, String(this.rule.leaseMs)],
        });
      } catch {
        throw errors.unavailable('Stream slots cannot be counted now; retry shortly');
      }
      if (Number(reply) !== 1) return undefined;
    } else if (!this.takeLocally(key, id)) return undefined;
    this.held.set(id, key);
    this.renewing ??= setInterval(() => void this.renew(), Math.max(100, Math.floor(this.rule.leaseMs / 3))).unref();
    return id;
  }

  /** Gives a slot back (harmless twice). If Redis cannot be told, its lease lapses on its own. */
  async release(id: string): Promise<void> {
    const key = this.held.get(id);
    if (key === undefined) return;
    this.held.delete(id);
    if (!this.held.size) {
      clearInterval(this.renewing);
      this.renewing = undefined;
    }
    if (this.store instanceof RedisStore) await this.store.client.zRem(key, id).catch(() => undefined);
    else {
      const slots = this.local.get(key);
      slots?.delete(id);
      if (slots && !slots.size) this.local.delete(key);
    }
  }

  /** Slots this instance holds now. */
  get holding(): number {
    return this.held.size;
  }

  private takeLocally(key: string, id: string): boolean {
    const now = Date.now();
    const slots = this.local.get(key) ?? new Map<string, number>();
    for (const [slot, until] of slots) if (until <= now) slots.delete(slot);
    if (slots.size >= this.rule.max) return false;
    slots.set(id, now + this.rule.leaseMs);
    this.local.set(key, slots);
    return true;
  }

  /** One script for every slot held here (one per holder on a Cluster); a failure is retried at the next renewal, well within the lease. */
  private async renew(): Promise<void> {
    const slots = [...this.held];
    if (!slots.length) return;
    if (!(this.store instanceof RedisStore)) {
      for (const [id, key] of slots) this.local.get(key)?.set(id, Date.now() + this.rule.leaseMs);
      return;
    }
    const { client } = this.store;
    const renew = (batch: typeof slots) =>
      client.eval(RENEW_SCRIPT, { keys: batch.map(([, key]) => key), arguments: [String(this.rule.leaseMs), ...batch.map(([id]) => id)] });
    // On a Redis Cluster holders' sets live in different slots: one script per holder.
    if (this.store.cluster) {
      const byHolder = new Map<string, typeof slots>();
      for (const slot of slots) byHolder.set(slot[1], [...(byHolder.get(slot[1]) ?? []), slot]);
      await Promise.all([...byHolder.values()].map((batch) => renew(batch).catch(() => undefined)));
    } else await renew(slots).catch(() => undefined);
  }
}
