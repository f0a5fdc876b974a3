import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import express from 'express';
import { createLogger } from '@trading/logging';
import { finishService, listen, type RunningServer } from '@trading/service';
import { Forwarder } from './forward';

/**
 * The facade's forwarder between two real HTTP servers: what reaches the upstream, what comes
 * back, and what a caller sees when the upstream is away, slow, or the caller leaves.
 */
/** One request over a plain socket (fetch refuses a Connection header); `parts` are written 20 ms apart, chunked. */
function send(url: string, method: string, headers: Record<string, string>, parts: string[]) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; text: string }>((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    const next = (i: number) => {
      if (i === parts.length - 1) return req.end(parts[i]);
      req.write(parts[i]);
      setTimeout(() => next(i + 1), 20);
    };
    next(0);
  });
}

describe('Forwarder', () => {
  let upstream: RunningServer;
  let front: RunningServer;
  let forwarder: Forwarder;
  let aborted: Promise<void>;
  let noteAborted: () => void;
  const finishedFrom: Array<string | undefined> = [];
  let up: express.Express;

  beforeAll(async () => {
    aborted = new Promise((resolve) => (noteAborted = resolve));
    up = express();
    up.all('/echo{/*rest}', express.text({ type: '*/*' }), (req, res) => {
      res.setHeader('connection', 'keep-alive, x-hop');
      res.setHeader('x-hop', 'connection-scoped');
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.status(201).json({ method: req.method, url: req.url, headers: req.headers, body: req.body ?? '' });
    });
    up.get('/stream', (_req, res) => {
      res.write('one,');
      setTimeout(() => res.end('two'), 50);
    });
    up.get('/hang', (req, res) => {
      res.on('close', () => noteAborted());
    });
    upstream = await listen(up, 0, '127.0.0.1');
    forwarder = new Forwarder(upstream.url, 'auth', { connections: 4, timeoutMs: 300 });

    const app = express();
    app.use('/v1', async (req, res) => {
      // What the access log reads when the answer has gone out.
      res.once('finish', () => finishedFrom.push(req.socket?.remoteAddress));
      res.setHeader('x-set-before', 'kept');
      await forwarder.forward(req, res, { 'x-added': 'signed', 'x-forwarded-for': undefined, authorization: undefined });
    });
    finishService(app, createLogger('rest-facade', 'silent'));
    front = await listen(app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await front.close();
    await forwarder.close();
    await upstream.close();
  });

  it('passes method, path below the mount point, query and body; applies the overrides', async () => {
    const res = await send(
      `${front.url}/v1/echo/token?x=1`,
      'POST',
      {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': '6.6.6.6',
        authorization: 'Bearer caller',
        'x-kept': 'yes',
        connection: 'keep-alive, x-kept-too',
        'x-kept-too': 'named by connection',
      },
      ['grant_type=refresh_token&refresh_token=r1'],
    );
    expect(res.status).toBe(201);
    const seen = JSON.parse(res.text) as { method: string; url: string; headers: Record<string, string>; body: string };
    expect(seen).toMatchObject({ method: 'POST', url: '/echo/token?x=1', body: 'grant_type=refresh_token&refresh_token=r1' });
    expect(seen.headers).toMatchObject({ 'x-added': 'signed', 'x-kept': 'yes', 'content-type': 'application/x-www-form-urlencoded' });
    // Dropped: the caller's own forwarding claim and token, and what named only the caller's connection.
    expect(seen.headers['x-forwarded-for']).toBeUndefined();
    expect(seen.headers['authorization']).toBeUndefined();
    expect(seen.headers['x-kept-too']).toBeUndefined();
    // The answer: upstream's headers (both cookies) over the ones set before, minus its connection-scoped ones.
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(res.headers['x-set-before']).toBe('kept');
    expect(res.headers['x-hop']).toBeUndefined();
    // The caller's request still knows its connection when it finishes (handed to undici as it is, it would not).
    await new Promise((r) => setImmediate(r));
    expect(finishedFrom).toEqual(['127.0.0.1']);
  });

  it('passes on a chunked request body whole, and streams a chunked answer', async () => {
    const body = await send(`${front.url}/v1/echo`, 'PUT', { 'content-type': 'text/plain' }, ['part one, ', 'part two']);
    expect(body.status).toBe(201);
    expect(JSON.parse(body.text)).toMatchObject({ method: 'PUT', body: 'part one, part two' });
    expect(await (await fetch(`${front.url}/v1/stream`)).text()).toBe('one,two');
  });

  it('refuses a body over its limit with 400 naming the body, before anything is sent on', async () => {
    const res = await fetch(`${front.url}/v1/echo`, { method: 'POST', body: 'x'.repeat(64 * 1024 + 1) });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'BAD_USER_INPUT', field: 'body' });
  });

  it('answers 502 BAD_GATEWAY as a problem when the upstream does not answer in time', async () => {
    const res = await fetch(`${front.url}/v1/hang`);
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(await res.json()).toMatchObject({ code: 'BAD_GATEWAY' });
  });

  it('answers 502 BAD_GATEWAY when the upstream cannot be reached', async () => {
    const gone = await listen(express(), 0, '127.0.0.1');
    await gone.close();
    const away = new Forwarder(gone.url, 'auth', { connections: 1, timeoutMs: 1000 });
    const app = express();
    app.use(async (req, res) => away.forward(req, res, {}));
    finishService(app, createLogger('rest-facade', 'silent'));
    const server = await listen(app, 0, '127.0.0.1');
    try {
      const res = await fetch(`${server.url}/oauth/token`, { method: 'POST', body: 'x=1' });
      expect(res.status).toBe(502);
      expect(await res.json()).toMatchObject({ code: 'BAD_GATEWAY', detail: expect.stringContaining('auth') });
    } finally {
      await server.close();
      await away.close();
    }
  });

  it('hands the request to the upstream app itself when it runs in this process, with the same headers applied', async () => {
    let present = true;
    const local = new Forwarder('http://127.0.0.1:9', 'auth', {
      connections: 1,
      timeoutMs: 300,
      inProcess: () => (present ? up : undefined),
    });
    const app = express();
    app.use('/v1', async (req, res) => {
      res.once('finish', () => finishedFrom.push(req.socket?.remoteAddress));
      await local.forward(req, res, { 'x-added': 'signed', 'x-forwarded-for': undefined });
    });
    finishService(app, createLogger('rest-facade', 'silent'));
    const server = await listen(app, 0, '127.0.0.1');
    try {
      finishedFrom.length = 0;
      const res = await send(`${server.url}/v1/echo/token?x=2`, 'POST', { 'content-type': 'text/plain', 'x-forwarded-for': '6.6.6.6' }, [
        'a=',
        'b',
      ]);
      expect(res.status).toBe(201);
      const seen = JSON.parse(res.text) as { url: string; headers: Record<string, string>; body: string };
      expect(seen).toMatchObject({ url: '/echo/token?x=2', body: 'a=b' });
      expect(seen.headers['x-added']).toBe('signed');
      expect(seen.headers['x-forwarded-for']).toBeUndefined();
      expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
      await new Promise((r) => setImmediate(r));
      expect(finishedFrom).toEqual(['127.0.0.1']);
      // Stopped (nothing to hand to): a 502 problem, as an unreachable listener is.
      present = false;
      const away = await fetch(`${server.url}/v1/echo`);
      expect(away.status).toBe(502);
      expect(await away.json()).toMatchObject({ code: 'BAD_GATEWAY' });
    } finally {
      await server.close();
      await local.close();
    }
  });

  it('ends the upstream call when the caller goes away', async () => {
    aborted = new Promise((resolve) => (noteAborted = resolve));
    const patient = new Forwarder(upstream.url, 'auth', { connections: 1, timeoutMs: 60_000 });
    const app = express();
    app.use(async (req, res) => patient.forward(req, res, {}));
    const server = await listen(app, 0, '127.0.0.1');
    try {
      const caller = new AbortController();
      const call = fetch(`${server.url}/hang`, { signal: caller.signal }).catch(() => 'left');
      await new Promise((r) => setTimeout(r, 100));
      caller.abort();
      expect(await call).toBe('left');
      // Without the abort the upstream would hold its request for the whole minute.
      await expect(Promise.race([aborted.then(() => 'ended'), new Promise((r) => setTimeout(() => r('still open'), 5000))])).resolves.toBe(
        'ended',
      );
    } finally {
      await server.close();
      await patient.close();
    }
  });
});
