/**
 * oidc-provider's storage in Redis, after the library's example adapter
 * (example/adapters/redis.js, written for ioredis) on node-redis: consumable models in a hash
 * (`consumed` set beside the payload), the others as a string; every token of a grant listed
 * under `grant:<id>` so revokeByGrantId can delete them; user codes and uids as pointers.
 * Every key carries `prefix` (the bench deletes `<prefix>*` afterwards).
 */
const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);
const CONSUMABLE = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

export function redisAdapter(client, prefix) {
  const grantKeyFor = (id) => `${prefix}grant:${id}`;
  const userCodeKeyFor = (userCode) => `${prefix}userCode:${userCode}`;
  const uidKeyFor = (uid) => `${prefix}uid:${uid}`;

  return class RedisAdapter {
    constructor(name) {
      this.name = name;
    }

    key(id) {
      return `${prefix}${this.name}:${id}`;
    }

    async upsert(id, payload, expiresIn) {
      const key = this.key(id);
      const multi = client.multi();
      if (CONSUMABLE.has(this.name)) multi.hSet(key, { payload: JSON.stringify(payload) });
      else multi.set(key, JSON.stringify(payload));
      if (expiresIn) multi.expire(key, expiresIn);
      if (GRANTABLE.has(this.name) && payload.grantId) {
        const grantKey = grantKeyFor(payload.grantId);
        multi.rPush(grantKey, key);
        // A grant's list lives as long as its longest-lived token.
        const ttl = await client.ttl(grantKey);
        if (expiresIn > ttl) multi.expire(grantKey, expiresIn);
      }
      if (payload.userCode) {
        multi.set(userCodeKeyFor(payload.userCode), id);
        if (expiresIn) multi.expire(userCodeKeyFor(payload.userCode), expiresIn);
      }
      if (payload.uid) {
        multi.set(uidKeyFor(payload.uid), id);
        if (expiresIn) multi.expire(uidKeyFor(payload.uid), expiresIn);
      }
      await multi.exec();
    }

    async find(id) {
      const key = this.key(id);
      if (CONSUMABLE.has(this.name)) {
        const data = await client.hGetAll(key);
        if (!data || !data.payload) return undefined;
        const { payload, ...rest } = data;
        return { ...rest, ...JSON.parse(payload), ...(rest.consumed ? { consumed: Number(rest.consumed) } : {}) };
      }
      const data = await client.get(key);
      return data ? JSON.parse(data) : undefined;
    }

    async findByUid(uid) {
      const id = await client.get(uidKeyFor(uid));
      return id ? this.find(id) : undefined;
    }

    async findByUserCode(userCode) {
      const id = await client.get(userCodeKeyFor(userCode));
      return id ? this.find(id) : undefined;
    }

    async destroy(id) {
      await client.del(this.key(id));
    }

    async revokeByGrantId(grantId) {
      const grantKey = grantKeyFor(grantId);
      const tokens = await client.lRange(grantKey, 0, -1);
      const multi = client.multi();
      for (const token of tokens) multi.del(token);
      multi.del(grantKey);
      await multi.exec();
    }

    async consume(id) {
      await client.hSet(this.key(id), 'consumed', Math.floor(Date.now() / 1000));
    }
  };
}
