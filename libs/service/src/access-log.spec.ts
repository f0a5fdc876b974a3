import { Writable } from 'node:stream';
import { createLogger } from '@trading/logging';
import { createService, finishService, listen } from './index';

describe('access log', () => {
  it('one line per request: info at the edge, debug behind it for successes, info for refusals on both; no probes', async () => {
    const lines: Array<{ level: number; msg: string; req?: { method: string; url: string; id: string }; res?: { statusCode: number } }> =
      [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const logger = createLogger('svc', 'debug', sink);
    const { app, internal } = createService({ name: 'svc', logger });
    for (const listener of [app, internal]) {
      listener.get('/ok', (_req, res) => void res.json({ ok: true }));
      listener.get('/missing-thing', (_req, res) => void res.status(404).json({}));
      finishService(listener, logger);
    }
    const edge = await listen(app, 0);
    const behind = await listen(internal, 0);
    try {
      for (const base of [edge.url, behind.url])
        for (const path of ['/ok?code=1', '/missing-thing', '/healthz', '/readyz']) await (await fetch(base + path)).text();
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      await edge.close();
      await behind.close();
    }
    const access = lines.filter((l) => l.msg === 'request completed').map((l) => [l.level, l.req!.method, l.req!.url, l.res!.statusCode]);
    expect(access).toEqual([
      [30, 'GET', '/ok?code=1', 200], // info
      [30, 'GET', '/missing-thing', 404], // info: the caller's to fix, not the operator's
      [20, 'GET', '/ok?code=1', 200], // debug: the internal hop
      [30, 'GET', '/missing-thing', 404],
    ]);
  });
});
