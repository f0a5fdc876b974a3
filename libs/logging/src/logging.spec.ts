import { currentRequestId, requestIdFrom, runWithRequestId } from './index';

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
