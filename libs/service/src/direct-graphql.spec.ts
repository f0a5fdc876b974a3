import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { AppError } from '@trading/errors';
import { createLogger } from '@trading/logging';
import type { GraphQLCall, GraphQLEndpoint } from './graphql-endpoint';
import { createService, finishService, listen } from './index';
import { http } from './testing/http';

describe('POST /graphql on an internal listener, without Express', () => {
  const lines: Array<{ level: number; msg: string; req?: { id: string; url: string }; res?: { statusCode: number } }> = [];
  const logger = createLogger(
    'svc',
    'debug',
    new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    }),
  );
  const calls: GraphQLCall[] = [];
  const endpoint: GraphQLEndpoint = async (call) => {
    calls.push(call);
    const query = (call.body as { query?: string })?.query;
    if (query === 'boom') throw new Error('secret internals at 10.0.0.1');
    if (query === 'refused') throw new AppError('UNAUTHENTICATED', 'Missing or invalid internal claims');
    return {
      status: 200,
      headers: new Map([['content-type', 'application/json; charset=utf-8']]),
      body: JSON.stringify({ data: { echo: query } }),
    };
  };
  const { internal, metrics, serveInternalGraphQL } = createService({ name: 'svc', logger });
  serveInternalGraphQL(endpoint, { limitBytes: 1024 });
  finishService(internal, logger);
  let direct: Awaited<ReturnType<typeof listen>>;
  // The same app served by Express alone (no direct path in front): what the direct path must answer alike.
  const throughExpress = internal.listen(0, '127.0.0.1');
  const expressUrl = () => `http://127.0.0.1:${(throughExpress.address() as AddressInfo).port}`;

  beforeAll(async () => {
    direct = await listen(internal, 0);
  });
  afterAll(async () => {
    await direct.close();
    await new Promise((r) => throughExpress.close(r));
  });

  const post = (base: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    http('POST', `${base}/graphql`, { body, headers: { 'x-request-id': 'req-1', ...headers } });

  it('answers as the Express route does: the reply, refusals, bad and oversized bodies, failures masked', async () => {
    const cases: Array<[string, string]> = [
      ['a query', JSON.stringify({ query: '{ echo }', variables: { a: 1 } })],
      ['an empty body', ''],
      ['a refused call', JSON.stringify({ query: 'refused' })],
      ['a failure', JSON.stringify({ query: 'boom' })],
      ['a body that is not JSON', '{"query": '],
      ['a body over the limit', JSON.stringify({ query: 'x'.repeat(2000) })],
    ];
    for (const [what, body] of cases) {
      const [viaDirect, viaExpress] = [await post(direct.url, body), await post(expressUrl(), body)];
      const shape = (r: typeof viaDirect) => ({ what, status: r.status, body: r.body, requestId: r.headers.get('x-request-id') });
      expect(shape(viaDirect)).toEqual(shape(viaExpress));
    }
    expect(calls.filter((c) => (c.body as { query?: string }).query === '{ echo }')).toEqual([
      expect.objectContaining({ requestId: 'req-1', body: { query: '{ echo }', variables: { a: 1 } } }),
      expect.objectContaining({ requestId: 'req-1', body: { query: '{ echo }', variables: { a: 1 } } }),
    ]);
    expect((await post(direct.url, JSON.stringify({ query: 'boom' }))).body).toMatchObject({ status: 500, code: 'INTERNAL_SERVER_ERROR' });
    expect(JSON.stringify((await post(direct.url, JSON.stringify({ query: 'boom' }))).body)).not.toContain('10.0.0.1');
    expect((await post(direct.url, 'x'.repeat(5000))).body).toMatchObject({ status: 400, field: 'body' });
  });

  it('leaves other methods, paths and content types to Express', async () => {
    expect((await http('GET', `${direct.url}/graphql`)).status).toBe(404);
    expect((await http('POST', `${direct.url}/graphql/`, { body: '{}', headers: { 'content-type': 'application/json' } })).status).toBe(
      200,
    );
    const before = calls.length;
    const text = await post(direct.url, 'query=1', { 'content-type': 'text/plain' });
    expect(text.status).toBe(200);
    expect(calls[before]!.body).toBeUndefined(); // Express's JSON parser left it alone, as before
    // Another charset: Express's parser decides (it refuses this one), not a UTF-8 reading of it.
    const utf16 = { 'content-type': 'application/json; charset=utf-16' };
    const [viaDirect, viaExpress] = [await post(direct.url, '{"query":"x"}', utf16), await post(expressUrl(), '{"query":"x"}', utf16)];
    expect(viaDirect.status).not.toBe(200);
    expect([viaDirect.status, viaDirect.body]).toEqual([viaExpress.status, viaExpress.body]);
  });

  it('logs each call once and counts it under the route /graphql', async () => {
    const counted = async (status: string) => {
      const line = (await metrics.metrics())
        .split('\n')
        .find(
          (l) =>
            /^http_request_duration_seconds_count\{/.test(l) &&
            /listener="internal"/.test(l) &&
            /route="\/graphql"/.test(l) &&
            l.includes(`status="${status}"`),
        );
      return Number(line?.split(' ').pop() ?? 0);
    };
    const [ok, refused] = [await counted('200'), await counted('401')];
    lines.length = 0;
    await post(direct.url, JSON.stringify({ query: '{ echo }' }), { 'content-type': 'application/json', 'x-request-id': 'logged-1' });
    await post(direct.url, JSON.stringify({ query: 'refused' }), { 'content-type': 'application/json', 'x-request-id': 'logged-2' });
    await new Promise((r) => setTimeout(r, 50));
    const access = lines.filter((l) => l.msg === 'request completed').map((l) => [l.level, l.req!.id, l.req!.url, l.res!.statusCode]);
    expect(access).toEqual([
      [20, 'logged-1', '/graphql', 200], // debug: an internal hop that went well
      [30, 'logged-2', '/graphql', 401], // info: a refusal is the caller's to fix
    ]);
    expect([await counted('200'), await counted('401')]).toEqual([ok + 1, refused + 1]);
  });
});
