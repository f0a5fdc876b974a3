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
});
