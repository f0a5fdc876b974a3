import { createLogger, currentRequestId, httpLogSerializers, requestIdFrom, runWithRequestId } from './index';

describe('request ids', () => {
  it('keeps a well-formed caller id and replaces a malformed one', () => {
    expect(requestIdFrom('abc-123')).toBe('abc-123');
    expect(requestIdFrom('bad id with spaces')).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIdFrom(undefined)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('is visible to async work started inside the request', async () => {
    const seen = await runWithRequestId('req-1', async () => {
      await new Promise((r) => setTimeout(r, 1));
      return currentRequestId();
    });
    expect(seen).toBe('req-1');
    expect(currentRequestId()).toBeUndefined();
  });
});

describe('what reaches the log', () => {
  const capture = () => {
    const lines: string[] = [];
    const logger = createLogger('t', 'info', { write: (line: string) => void lines.push(line) });
    return { logger, text: () => lines.join('') };
  };

  it('drops SQL parameters and driver detail from errors, keeps the statement and codes', () => {
    const { logger, text } = capture();
    const err = Object.assign(new Error('duplicate key value violates unique constraint "users_email_key"'), {
      query: 'INSERT INTO users (email, password_hash) VALUES ($1, $2)',
      parameters: ['alice@example.com', '$argon2id$v=19$secret-hash'],
      detail: 'Key (email)=(alice@example.com) already exists.',
      driverError: { code: '23505', detail: 'Key (email)=(alice@example.com) already exists.' },
    });
    logger.error({ err }, 'insert failed');
    expect(text()).toContain('users_email_key');
    expect(text()).toContain('INSERT INTO users');
    expect(text()).toContain('23505');
    expect(text()).not.toContain('alice@example.com');
    expect(text()).not.toContain('secret-hash');
  });

  it('logs requests and responses without cookies, tokens, Set-Cookie, Location, or query strings on auth paths', () => {
    const { logger, text } = capture();
    const req = httpLogSerializers.req({
      id: 'r1',
      method: 'GET',
      url: '/oauth/authorize?code_challenge=abc&state=s3cr3t',
      remoteAddress: '127.0.0.1',
    });
    const res = httpLogSerializers.res({ statusCode: 303 });
    logger.info({ req, res }, 'request completed');
    expect(text()).toContain('/oauth/authorize');
    expect(text()).not.toContain('s3cr3t');
    expect(httpLogSerializers.req({ url: '/v1/accounts?limit=5' }).url).toBe('/v1/accounts?limit=5');
  });
});
