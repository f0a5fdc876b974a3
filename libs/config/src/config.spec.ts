import { ConfigError, field, loadConfig, z } from './index';

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
