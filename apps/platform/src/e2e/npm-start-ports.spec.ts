import { createServer, type Server } from 'node:net';
import { freePort } from '@trading/testing';
import { startNpmStart } from './npm-start-process';

/** What a newcomer sees when a port the platform needs is taken: one line naming it and the setting that moves it. */
describe('npm start with a port taken', () => {
  let squatter: Server;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    squatter = createServer();
    await new Promise<void>((done) => squatter.listen(port, '127.0.0.1', done));
  });
  afterAll(() => new Promise<void>((done) => squatter.close(() => done())));

  it('refuses at once in at most two lines, naming the port and FACADE_PORT, with no stack trace or JSON log line', async () => {
    const failed = await startNpmStart({ FACADE_PORT: String(port) }).then(
      () => undefined,
      (err: Error) => err.message,
    );
    expect(failed).toBeDefined();
    const printed = failed!
      .replace(/^npm start did not come up:\n/, '')
      .trim()
      .split('\n');
    expect(printed.length).toBeLessThanOrEqual(2);
    expect(printed.join('\n')).toContain(`${port} (FACADE_PORT)`);
    expect(printed.join('\n')).toContain('FACADE_PORT=<free port> npm start');
    expect(printed.join('\n')).not.toMatch(/EADDRINUSE|"level":|^\s+at /m);
  }, 60_000);
});
