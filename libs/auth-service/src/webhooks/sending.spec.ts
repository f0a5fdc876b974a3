import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { startHttpsTestServer, type HttpsTestServer } from '@trading/testing';
import {
  newSigningSecret,
  signatureHeaders,
  WEBHOOK_SNIPPET_BYTES,
  WEBHOOK_URL_MAX_LENGTH,
  webhookUrlProblem,
  WebhookSender,
} from './sending';

/** A resolver that answers the given addresses in turn (the last one from then on), as a rebinding DNS server would. */
const resolvingTo = (...answers: string[]): LookupFunction => {
  let calls = 0;
  return (_host, options, callback) => {
    const address = answers[Math.min(calls++, answers.length - 1)]!;
    const family = address.includes(':') ? 6 : 4;
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
};
const notResolving: LookupFunction = (host, _options, callback) =>
  callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), '', 0);

interface Receiver {
  base: string;
  requests: Array<{ method?: string; url?: string; headers: IncomingMessage['headers']; body: string }>;
  connections: number;
  close(): Promise<void>;
}

/** A real http server on 127.0.0.1 that records what reaches it and answers with `handler`. */
async function startReceiver(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Receiver> {
  const receiver: Receiver = { base: '', requests: [], connections: 0, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      receiver.requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      handler(req, res);
    });
  });
  server.on('connection', () => receiver.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

describe('webhook URLs a vendor registers', () => {
  it('outside DEV, only https is accepted', async () => {
    for (const environment of ['PROD', 'UAT'] as const) {
      expect(await webhookUrlProblem('http://hooks.vendor.example/in', environment, resolvingTo('93.184.216.34'))).toBe(
        'the url must be an https URL',
      );
      expect(await webhookUrlProblem('http://127.0.0.1:8080/in', environment)).toBe('the url must be an https URL');
      expect(await webhookUrlProblem('https://hooks.vendor.example/in', environment, resolvingTo('93.184.216.34'))).toBeNull();
    }
    expect(await webhookUrlProblem('ftp://hooks.vendor.example/in', 'PROD')).toBe('the url must be an https URL');
  });

  it('in DEV, http or https to localhost, 127.0.0.1 or [::1] on any port, and https to public addresses', async () => {
    for (const url of [
      'http://127.0.0.1:8080/in',
      'http://localhost:3000/in',
      'http://[::1]:9/in',
      'https://127.0.0.1/in',
      'https://LOCALHOST:8443/in',
    ])
      expect([url, await webhookUrlProblem(url, 'DEV')]).toEqual([url, null]);
    expect(await webhookUrlProblem('https://hooks.vendor.example/in', 'DEV', resolvingTo('93.184.216.34'))).toBeNull();
    // Any other host is held to the public rule, even in DEV.
    expect(await webhookUrlProblem('http://hooks.vendor.example/in', 'DEV', resolvingTo('93.184.216.34'))).toBe(
      'the url must be https, or http to localhost, 127.0.0.1 or [::1]',
    );
    expect(await webhookUrlProblem('https://10.0.0.1/in', 'DEV')).toMatch(/not public/);
    expect(await webhookUrlProblem('https://[::ffff:127.0.0.1]/in', 'DEV')).toMatch(/not public/);
    expect(await webhookUrlProblem('https://hooks.vendor.example/in', 'DEV', resolvingTo('127.0.0.1'))).toMatch(/not public/);
  });

  it('attack: outside DEV, loopback, private, link-local and metadata addresses are refused, by address or by name', async () => {
    for (const url of [
      'https://127.0.0.1/in',
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.1/in',
      'https://[::1]/in',
      'https://[fd00:ec2::254]/in',
      'https://192.168.1.10:8443/in',
      'https://0.0.0.0/in',
      // The URL parser reads this as 127.0.0.1.
      'https://0x7f.1/in',
    ])
      expect([url, await webhookUrlProblem(url, 'PROD')]).toEqual([url, expect.stringMatching(/not public/)]);
    for (const address of ['127.0.0.1', '169.254.169.254', '10.0.0.1', '::1'])
      expect([address, await webhookUrlProblem('https://hooks.vendor.example/in', 'PROD', resolvingTo(address))]).toEqual([
        address,
        expect.stringMatching(/not public/),
      ]);
    // The system's resolver too: localhost is this machine.
    expect(await webhookUrlProblem('https://localhost/in', 'PROD')).toMatch(/not public/);
    expect(await webhookUrlProblem('https://93.184.216.34/in', 'PROD')).toBeNull();
  });

  it('a name that does not resolve, credentials, a fragment, a relative or overlong URL are refused with the reason', async () => {
    expect(await webhookUrlProblem('https://nowhere.vendor.example/in', 'PROD', notResolving)).toBe(
      "the url's host nowhere.vendor.example does not resolve to any address",
    );
    expect(await webhookUrlProblem('https://user:secret@hooks.vendor.example/in', 'PROD')).toBe(
      'the url must not carry credentials (user:password@)',
    );
    expect(await webhookUrlProblem('https://user@hooks.vendor.example/in', 'PROD')).toMatch(/credentials/);
    expect(await webhookUrlProblem('https://hooks.vendor.example/in#part', 'PROD')).toBe('the url must not have a fragment (#…)');
    expect(await webhookUrlProblem('https://hooks.vendor.example/in#', 'PROD')).toMatch(/fragment/);
    expect(await webhookUrlProblem('/in', 'PROD')).toBe('the url is not an absolute URL');
    expect(await webhookUrlProblem('hooks.vendor.example/in', 'PROD')).toBe('the url is not an absolute URL');
    expect(await webhookUrlProblem('https://hooks.vendor.example/in\n', 'PROD')).toMatch(/control characters/);
    const base = 'https://hooks.vendor.example/';
    const resolver = resolvingTo('93.184.216.34');
    expect(await webhookUrlProblem(base + 'a'.repeat(WEBHOOK_URL_MAX_LENGTH - base.length), 'PROD', resolver)).toBeNull();
    expect(await webhookUrlProblem(base + 'a'.repeat(WEBHOOK_URL_MAX_LENGTH - base.length + 1), 'PROD', resolver)).toBe(
      'the url is longer than 2000 characters',
    );
  });
});

describe('sending webhooks', () => {
  let receiver: Receiver;
  let answer: (req: IncomingMessage, res: ServerResponse) => void;
  let tls: HttpsTestServer;
  const senders: WebhookSender[] = [];
  const sender = (options: ConstructorParameters<typeof WebhookSender>[0] = {}) => {
    const s = new WebhookSender({ ca: tls.ca, ...options });
    senders.push(s);
    return s;
  };
  const message = { headers: { 'webhook-id': 'msg_1' }, body: '{"type":"order.filled"}' };

  beforeAll(async () => {
    receiver = await startReceiver((req, res) => answer(req, res));
    tls = await startHttpsTestServer((_req, res) => res.writeHead(204).end(), ['hooks.vendor.example']);
  });
  beforeEach(() => {
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
  });
  afterAll(async () => {
    await Promise.all(senders.map((s) => s.close()));
    await receiver.close();
    await tls.close();
  });

  it('posts the body as JSON with the given headers; a 2xx is a delivery, with its status and duration', async () => {
    const before = receiver.requests.length;
    const result = await sender().post(
      `${receiver.base}/in?x=1`,
      { ...message, headers: { ...message.headers, 'Content-Type': 'text/plain' } },
      'DEV',
    );
    expect(result).toEqual({ status: 200, durationMs: expect.any(Number), responseSnippet: 'thanks', error: null });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(result.durationMs).toBeLessThan(2000);
    const received = receiver.requests.slice(before);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: 'POST', url: '/in?x=1', body: message.body });
    expect(received[0]!.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'msg_1' });
  });

  it('a 500 is not a delivery: its status and snippet, control characters stripped', async () => {
    answer = (_req, res) => res.writeHead(500).end('database\u0000 down\r\n\u001b[31mretry\u202e later');
    expect(await sender().post(`${receiver.base}/in`, message, 'DEV')).toEqual({
      status: 500,
      durationMs: expect.any(Number),
      responseSnippet: 'database down  [31mretry later',
      error: null,
    });
  });

  it('attack: a redirect is not followed, the place it points to gets nothing', async () => {
    const target = await startReceiver((_req, res) => res.writeHead(200).end('ok'));
    try {
      answer = (_req, res) => res.writeHead(307, { location: `${target.base}/stolen` }).end();
      const result = await sender().post(`${receiver.base}/in`, message, 'DEV');
      expect(result).toMatchObject({ status: 307, error: null });
      expect(target.connections).toBe(0);
      expect(target.requests).toHaveLength(0);
    } finally {
      await target.close();
    }
  });

  it('a receiver that does not answer is cut at the timeout', async () => {
    answer = () => undefined;
    const started = Date.now();
    const result = await sender({ requestTimeoutMs: 300 }).post(`${receiver.base}/silent`, message, 'DEV');
    expect(result).toMatchObject({ status: null, responseSnippet: '', error: 'timed out' });
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('attack: an endless answer is read only for its first 1 KiB, and the connection dropped', async () => {
    let written = 0;
    let closed: () => void;
    const dropped = new Promise<void>((resolve) => (closed = resolve));
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.on('close', () => closed());
      const chunk = Buffer.alloc(64 * 1024, 'é');
      const pump = () => {
        while (!res.destroyed && written < 1024 ** 3) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      pump();
    };
    const result = await sender().post(`${receiver.base}/endless`, message, 'DEV');
    await dropped;
    expect(result).toMatchObject({ status: 200, error: null });
    expect(Buffer.byteLength(result.responseSnippet)).toBeLessThanOrEqual(WEBHOOK_SNIPPET_BYTES);
    // Whole characters only: 'é' is two bytes, so 512 of them fill the 1 KiB.
    expect(result.responseSnippet).toBe('é'.repeat(512));
    expect(result.durationMs).toBeLessThan(2000);
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it('attack: outside DEV, loopback and private addresses are never connected to, by address or by name', async () => {
    const s = sender({ resolve: resolvingTo('127.0.0.1') });
    const before = { receiver: receiver.connections, tls: tls.connections };
    for (const url of [`https://127.0.0.1:${tls.port}/in`, `https://[::1]:${tls.port}/in`, `https://hooks.vendor.example:${tls.port}/in`])
      expect([url, await s.post(url, message, 'PROD')]).toEqual([
        url,
        expect.objectContaining({ status: null, error: 'address not allowed' }),
      ]);
    expect(await s.post(`${receiver.base}/in`, message, 'UAT')).toMatchObject({ status: null, error: 'the url must be an https URL' });
    expect(
      await sender({ resolve: resolvingTo('169.254.169.254') }).post('https://hooks.vendor.example/in', message, 'PROD'),
    ).toMatchObject({
      error: 'address not allowed',
    });
    expect({ receiver: receiver.connections, tls: tls.connections }).toEqual(before);
  });

  it('attack: a name registered while public and rebound to 127.0.0.1 is refused at send time', async () => {
    const rebinding = resolvingTo('93.184.216.34', '127.0.0.1');
    const url = `https://hooks.vendor.example:${tls.port}/in`;
    expect(await webhookUrlProblem(url, 'PROD', rebinding)).toBeNull();
    const before = tls.connections;
    expect(await sender({ resolve: rebinding }).post(url, message, 'PROD')).toMatchObject({ status: null, error: 'address not allowed' });
    expect(tls.connections).toBe(before);
    // The same name and server, with loopback allowed for it, is reached: the refusal above is the address's.
    expect(await sender({ resolve: resolvingTo('127.0.0.1') }).post(`https://localhost:${tls.port}/in`, message, 'DEV')).toMatchObject({
      status: 204,
      error: null,
    });
  });

  it('in DEV, loopback is reached only by localhost, 127.0.0.1 and [::1], not by another name', async () => {
    const before = tls.connections;
    const s = sender({ resolve: resolvingTo('127.0.0.1') });
    expect(await s.post(`https://hooks.vendor.example:${tls.port}/in`, message, 'DEV')).toMatchObject({ error: 'address not allowed' });
    expect(tls.connections).toBe(before);
    expect(await s.post(`https://[::1]:${tls.port}/in`, message, 'DEV')).toMatchObject({ status: 204, error: null });
    expect(await sender({ resolve: resolvingTo('10.0.0.8') }).post(`http://localhost:${tls.port}/in`, message, 'DEV')).toMatchObject({
      error: 'address not allowed',
    });
  });
});

describe('webhook signatures', () => {
  it('signs once per secret, and a receiver holding either secret of a rotation verifies it; another secret does not', () => {
    const current = newSigningSecret();
    const previous = newSigningSecret();
    const body = JSON.stringify({ type: 'order.filled', data: { orderId: 'o-1' } });
    const timestamp = new Date();
    const headers = signatureHeaders([current, previous], 'msg_2Lh9', timestamp, body);
    expect(headers['webhook-id']).toBe('msg_2Lh9');
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(timestamp.getTime() / 1000)));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=* v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow('No matching signature found');
    // The signature covers the body: a changed body fails.
    expect(() => new Webhook(current).verify(body.replace('o-1', 'o-2'), headers)).toThrow('No matching signature found');
    // One secret, one signature.
    expect(signatureHeaders([current], 'msg_2Lh9', timestamp, body)['webhook-signature'].split(' ')).toHaveLength(1);
    expect(() => signatureHeaders([], 'msg_2Lh9', timestamp, body)).toThrow();
  });

  it('a new secret is whsec_ and 32 random bytes in base64', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(secret);
  });
});
