import express from 'express';
import { createLogger } from '@trading/logging';
import { finishService, listen, type RunningServer } from '@trading/service';
import { http } from '@trading/testing';
import { optionsAnswer, queryGuard } from './route-guard';

/** The guards' contracts the facade's own wiring cannot show (their answers there are pinned over HTTP in facade.spec.ts). */
describe('edge guards', () => {
  it('refuses to start when a path the API serves has no operation in the OpenAPI document', () => {
    const parameters = new Map([['GET /accounts', []]]);
    expect(() => queryGuard([{ method: 'get', path: '/accounts' }], parameters)).not.toThrow();
    expect(() =>
      queryGuard(
        [
          { method: 'get', path: '/accounts' },
          { method: 'patch', path: '/accounts/:accountId' },
        ],
        parameters,
      ),
    ).toThrow(new Error('PATCH /accounts/:accountId has no operation in the OpenAPI document'));
  });

  describe('OPTIONS behind a check that refuses through next(err)', () => {
    let server: RunningServer | undefined;
    beforeAll(async () => {
      // The facade's authenticate refuses by rejecting; a check that calls next(err) instead (here the JSON body
      // parser, refusing a malformed body) must be answered with its refusal all the same, never 204.
      const app = express();
      app.use(optionsAnswer([{ method: 'GET', path: '/accounts' }], express.json()));
      finishService(app, createLogger('edge-guards', 'silent'));
      server = await listen(app, 0, '127.0.0.1');
    });
    afterAll(async () => {
      await server?.close(); // not there when setting up the app failed
    });

    it("answers the check's refusal, without Allow; once the check passes, 204 with Allow", async () => {
      const refused = await http('OPTIONS', `${server!.url}/accounts`, { body: '{', headers: { 'content-type': 'application/json' } });
      expect(refused).toMatchObject({ status: 400, body: { code: 'BAD_USER_INPUT', field: 'body' } });
      expect(refused.headers.get('allow')).toBeNull();
      const passed = await http('OPTIONS', `${server!.url}/accounts`, { body: '{}', headers: { 'content-type': 'application/json' } });
      expect([passed.status, passed.headers.get('allow')]).toEqual([204, 'GET, HEAD, OPTIONS']);
    });
  });
});
