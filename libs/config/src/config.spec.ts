import { commonSchema, ConfigError, field, loadConfig, z } from './index';

const schema = z.object({ PORT: field.port(8080), DATABASE_URL: field.postgresUrl(), KEY: field.secret() });

describe('loadConfig', () => {
  it('applies defaults and freezes the result', () => {
    const cfg = loadConfig('svc', schema, { DATABASE_URL: 'postgres://x/y', KEY: 'k'.repeat(32) });
    expect(cfg.PORT).toBe(8080);
    expect(Object.isFrozen(cfg)).toBe(true);
  });

  it('names every bad or missing variable in one error', () => {
    let error: unknown;
    try {
      loadConfig('svc', schema, { PORT: 'eighty', KEY: 'short' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain('PORT');
    expect(message).toContain('"eighty"');
    expect(message).toContain('DATABASE_URL');
    expect(message).toContain('KEY: must be at least 32 characters');
  });

  it('reads Redis behind Sentinel or as a Cluster, naming a bad node or a contradiction', () => {
    const redis = z.object(commonSchema);
    expect(loadConfig('svc', redis, {})).toMatchObject({ REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(loadConfig('svc', redis, {}).REDIS_SENTINELS).toBeUndefined();
    expect(loadConfig('svc', redis, { REDIS_SENTINELS: 'a:26379, b:26379,[::1]:26379', REDIS_SENTINEL_NAME: 'trading' })).toMatchObject({
      REDIS_SENTINELS: ['a:26379', 'b:26379', '[::1]:26379'],
      REDIS_SENTINEL_NAME: 'trading',
    });
    expect(loadConfig('svc', redis, { REDIS_CLUSTER_NODES: 'r1:6379,r2:6379' }).REDIS_CLUSTER_NODES).toEqual(['r1:6379', 'r2:6379']);
    expect(() => loadConfig('svc', redis, { REDIS_CLUSTER_NODES: 'r1' })).toThrow(/REDIS_CLUSTER_NODES.*host:port/);
    expect(() => loadConfig('svc', redis, { REDIS_SENTINELS: 'a:99999' })).toThrow(/REDIS_SENTINELS.*above 65535/);
    expect(() => loadConfig('svc', redis, { REDIS_SENTINEL_NAME: 'two words' })).toThrow(/REDIS_SENTINEL_NAME/);
    expect(() => loadConfig('svc', redis, { REDIS_SENTINELS: 'a:26379', REDIS_CLUSTER_NODES: 'r1:6379' })).toThrow(
      /set REDIS_SENTINELS or REDIS_CLUSTER_NODES, not both/,
    );
  });

  it('never echoes a rejected secret: keys, tokens, passwords, URLs (which carry credentials)', () => {
    const secrets = z.object({
      ADMIN_TOKEN: z.string().min(24),
      SERVICE_KEY: z.string().min(40),
      DB_PASSWORD: z.string().min(12),
      DATABASE_URL: field.postgresUrl(),
    });
    let message = '';
    try {
      loadConfig('svc', secrets, {
        ADMIN_TOKEN: 'tok-hunter2',
        SERVICE_KEY: 'key-hunter2',
        DB_PASSWORD: 'pw-hunter2',
        DATABASE_URL: 'mysql://root:hunter2@db',
      });
    } catch (e) {
      message = (e as Error).message;
    }
    for (const name of ['ADMIN_TOKEN', 'SERVICE_KEY', 'DB_PASSWORD', 'DATABASE_URL']) expect(message).toContain(name);
    expect(message).not.toContain('hunter2');
  });
});
