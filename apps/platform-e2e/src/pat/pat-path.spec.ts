import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generateKeyPair, SignJWT } from 'jose';
import { SessionStore } from '@trading/auth';
import { openApiDocument } from '@trading/rest-facade-service';
import { http, openApiResponseValidator, testKeys } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

const run = promisify(execFile);
const ROOT = join(__dirname, '../../../..');
const [alice, bob] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[0]];

/**
 * The foundation's one authenticated path, from outside over HTTP:
 * admin CLI → PAT → POST /v1/pat/login → GET /v1/accounts (facade → gateway → accounts → PostgreSQL).
 */
describe('PAT path through every layer', () => {
  let p: TestPlatform;
  let aliceId: string;

  beforeAll(async () => {
    p = await startTestPlatform();
    aliceId = (await p.auth.users.findByEmail(alice.email))!.id;
  }, 60_000);
  afterAll(() => p?.stop());

  /** The admin CLI, run as a user would run it, against this platform's admin API (`stdin`: what is piped in, e.g. a password). */
  async function adminCli(...args: string[]) {
    return adminCliWithInput('', ...args);
  }

  async function adminCliWithInput(stdin: string, ...args: string[]) {
    try {
      const running = run(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'tools/admin/cli.ts'), ...args, '--json'], {
        env: { ...process.env, ADMIN_URL: p.urls.adminApi, ADMIN_TOKEN: p.adminToken },
      });
      running.child.stdin?.end(stdin);
      const { stdout } = await running;
      return { code: 0, body: JSON.parse(stdout) };
    } catch (err) {
      const e = err as { code: number; stdout: string };
      return { code: e.code, body: e.stdout ? JSON.parse(e.stdout) : undefined };
    }
  }

  async function patFor(email: string, scope: 'READ_ONLY' | 'READ_WRITE', extra: string[] = []) {
    const created = await adminCli(
      'pat',
      'create',
      '--email',
      email,
      '--name',
      `e2e ${scope}`,
      '--scope',
      scope,
      '--expires',
      inDays(30),
      ...extra,
    );
    expect(created.code).toBe(0);
    return created.body.token as string;
  }

  async function sessionFor(pat: string) {
    const res = await http('POST', `${p.urls.api}/pat/login`, { body: { token: pat } });
    expect(res.status).toBe(200);
    return res.body as { userId: string; token: string };
  }

  it('creates a user and a PAT with the admin CLI, printing the token once', async () => {
    const email = `cli-${randomUUID()}@example.com`;
    const user = await adminCliWithInput(
      'a-long-enough-password',
      'users',
      'create',
      '--email',
      email,
      '--first-name',
      'Cli',
      '--last-name',
      'User',
    );
    expect(user).toMatchObject({ code: 0, body: { email } });
    const pat = await adminCli(
      'pat',
      'create',
      '--email',
      email,
      '--name',
      'script',
      '--scope',
      'READ_ONLY',
      '--expires',
      inDays(10),
      '--ip',
      '203.0.113.0/24',
    );
    expect(pat.code).toBe(0);
    expect(pat.body.token).toMatch(/^tpat_[0-9A-Za-z]{16}\.[0-9A-Za-z]{38}$/);
    expect(pat.body).toMatchObject({ scope: 'READ_ONLY', ips: ['203.0.113.0/24'], userId: user.body.userId });
  });

  it('refuses the admin API without the admin credential and names bad fields', async () => {
    const noAuth = await http('POST', `${p.urls.adminApi}/admin/users`, { body: { email: 'x@example.com' } });
    expect(noAuth.status).toBe(401);
    const wrong = await http('POST', `${p.urls.adminApi}/admin/pats`, { token: 'not-the-admin-token-at-all', body: {} });
    expect(wrong.status).toBe(401);
    const tooLate = await adminCli(
      'pat',
      'create',
      '--email',
      alice.email,
      '--name',
      'x',
      '--scope',
      'READ_ONLY',
      '--expires',
      inDays(400),
    );
    expect(tooLate).toMatchObject({ code: 1, body: { status: 422, field: 'expires' } });
    const badScope = await adminCli('pat', 'create', '--email', alice.email, '--name', 'x', '--scope', 'ADMIN', '--expires', inDays(1));
    expect(badScope).toMatchObject({ code: 1, body: { status: 400, field: 'scope' } });
    const badIp = await adminCli(
      'pat',
      'create',
      '--email',
      alice.email,
      '--name',
      'x',
      '--scope',
      'READ_ONLY',
      '--expires',
      inDays(1),
      '--ip',
      'example.com',
    );
    expect(badIp).toMatchObject({ code: 1, body: { status: 400, field: 'ips' } });
  });

  it("logs in with a PAT and lists that user's accounts and nobody else's", async () => {
    const session = await sessionFor(await patFor(alice.email, 'READ_ONLY'));
    expect(session.userId).toBe(aliceId);
    const res = await http('GET', `${p.urls.api}/accounts`, { token: session.token });
    expect(res.status).toBe(200);
    const ids = (res.body.accounts as Array<{ id: string }>).map((a) => a.id).sort();
    expect(ids).toEqual(
      DEMO_ACCOUNTS.filter((a) => a.userId === alice.id)
        .map((a) => a.id)
        .sort(),
    );
    expect(res.body.accounts[0]).toMatchObject({
      number: expect.any(String),
      type: expect.stringMatching(/^(CASH|MARGIN)$/),
      status: 'ACTIVE',
      baseCurrency: 'USD',
    });
    expect(res.body.accounts[0].createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/);

    const bobSession = await sessionFor(await patFor(bob.email, 'READ_ONLY'));
    const bobs = await http('GET', `${p.urls.api}/accounts`, { token: bobSession.token });
    expect((bobs.body.accounts as Array<{ id: string }>).map((a) => a.id)).toEqual([DEMO_ACCOUNTS[2]!.id]);
  });

  it('answers 401 problem+json with WWW-Authenticate for no token, a bad token and an expired token', async () => {
    const expired = await p.auth.signer.sign({ sub: aliceId, sid: randomUUID(), kind: 'pat', scope: ['read:accounts'] }, -60);
    for (const token of [undefined, 'not-a-jwt', expired]) {
      const res = await http('GET', `${p.urls.api}/accounts`, { token });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(res.body).toMatchObject({ status: 401, code: 'UNAUTHENTICATED', requestId: expect.any(String) });
    }
    const expiredRes = await http('GET', `${p.urls.api}/accounts`, { token: expired });
    expect(expiredRes.body.detail).toMatch(/expired/);
  });

  it('refuses a token signed by anyone but the auth app', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({ sid: randomUUID(), kind: 'pat', scope: 'read:accounts' })
      .setProtectedHeader({ alg: 'ES256', kid: 'forged' })
      .setSubject(aliceId)
      .setIssuer('http://localhost:0')
      .setAudience('trading-api')
      .setExpirationTime('5m')
      .sign(privateKey);
    expect((await http('GET', `${p.urls.api}/accounts`, { token: forged })).status).toBe(401);
  });

  it('gives one uniform 401 for unknown, malformed, revoked-by-IP and mistyped PATs', async () => {
    const real = await patFor(alice.email, 'READ_ONLY');
    const ipBound = await patFor(alice.email, 'READ_ONLY', ['--ip', '198.51.100.7']);
    const typo = real.slice(0, -1) + (real.endsWith('a') ? 'b' : 'a');
    const bodies = [];
    for (const token of ['tpat_AAAAAAAAAAAAAAAA.' + 'A'.repeat(38), 'garbage', typo, ipBound, 42]) {
      const res = await http('POST', `${p.urls.api}/pat/login`, { body: { token } });
      expect(res.status).toBe(401);
      bodies.push(res.body.detail);
    }
    expect(new Set(bodies).size).toBe(1);
  });

  it('stops a session at once when its PAT is revoked', async () => {
    const pat = await patFor(alice.email, 'READ_ONLY');
    const session = await sessionFor(pat);
    expect((await http('GET', `${p.urls.api}/accounts`, { token: session.token })).status).toBe(200);
    await new SessionStore(p.store).revokePat(pat.split('.')[0]!);
    const after = await http('GET', `${p.urls.api}/accounts`, { token: session.token });
    expect(after.status).toBe(401);
    expect(after.body.detail).toMatch(/session has ended/);
  });

  it('refuses a READ_ONLY session on a POST route with 403, but not a READ_WRITE one', async () => {
    const ro = await sessionFor(await patFor(alice.email, 'READ_ONLY'));
    const deposit = { accountId: DEMO_ACCOUNTS[0]!.id, amount: '1.00', currency: 'USD' };
    const res = await http('POST', `${p.urls.api}/banking/deposit`, { token: ro.token, body: deposit });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('READ_ONLY_TOKEN');
    const rw = await sessionFor(await patFor(alice.email, 'READ_WRITE'));
    const allowed = await http('POST', `${p.urls.api}/banking/deposit`, { token: rw.token, body: deposit });
    expect(allowed).toMatchObject({
      status: 201,
      body: { type: 'DEPOSIT', state: 'PENDING', amount: '1.00', accountId: deposit.accountId },
    });
  });

  it('enforces scopes at the facade (403 insufficient_scope) and in the subgraphs', async () => {
    const sid = randomUUID();
    await new SessionStore(p.store).create({
      sid,
      userId: aliceId,
      kind: 'oauth',
      clientId: 'test-app',
      expiresAt: Math.floor(Date.now() / 1000) + 300,
    });
    const token = await p.auth.signer.sign({ sub: aliceId, sid, kind: 'oauth', clientId: 'test-app', scope: ['read:orders'] }, 300);
    const rest = await http('GET', `${p.urls.api}/accounts`, { token });
    expect(rest.status).toBe(403);
    expect(rest.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(rest.body.code).toBe('INSUFFICIENT_SCOPE');

    const gql = await http('POST', p.urls.gateway, { token, body: { query: '{ accounts { id } instruments { symbol } }' } });
    expect(gql.body.errors[0].extensions.code).toBe('INSUFFICIENT_SCOPE');
  });

  it('answers one federated query across accounts, banking and oms', async () => {
    const session = await sessionFor(await patFor(alice.email, 'READ_ONLY'));
    const res = await http('POST', p.urls.gateway, {
      token: session.token,
      body: {
        query:
          '{ accounts { number positions { nodes { symbol quantity averageCost } } balances { currency cash } orders { nodes { id } } } }',
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    const margin = res.body.data.accounts.find((a: { number: string }) => a.number === 'DU1000002');
    expect(margin.positions.nodes).toEqual(expect.arrayContaining([{ symbol: 'AAPL', quantity: '10', averageCost: '172.35' }]));
    expect(margin.balances).toEqual([{ currency: 'USD', cash: '25000.00' }]);
    expect(margin.orders.nodes).toEqual([]);
  });

  it('refuses unauthenticated GraphQL calls at the gateway', async () => {
    const anonymous = await http('POST', p.urls.gateway, { body: { query: '{ accounts { id } }' } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer /);
  });

  it('gives nothing to a caller who reaches a subgraph directly without signed claims', async () => {
    for (const url of [p.urls.accounts, p.urls.banking, p.urls.oms]) {
      const none = await http('POST', url, { body: { query: '{ __typename }' } });
      expect(none.status).toBe(401);
      // Signed with a gateway key the platform does not know (a kid that names the gateway is not enough).
      const forged = await testKeys().sign({ sub: aliceId, sid: 's', kind: 'pat', scope: ['read:accounts'] }, 'accounts');
      const res = await http('POST', url, { body: { query: '{ __typename }' }, headers: { 'x-internal-claims': forged } });
      expect(res.status).toBe(401);
    }
  });

  it('maps GraphQL errors to HTTP statuses and keeps the request id on every hop', async () => {
    const session = await sessionFor(await patFor(alice.email, 'READ_ONLY'));
    const invalid = await http('POST', p.urls.gateway, { token: session.token, body: { query: '{ accounts { nope } }' } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');

    const res = await http('GET', `${p.urls.api}/accounts`, { token: session.token, headers: { 'x-request-id': 'e2e-trace-1' } });
    expect(res.headers.get('x-request-id')).toBe('e2e-trace-1');
    const problem = await http('GET', `${p.urls.api}/nowhere`, { token: session.token, headers: { 'x-request-id': 'e2e-trace-2' } });
    expect(problem).toMatchObject({ status: 404, body: { code: 'NOT_FOUND', requestId: 'e2e-trace-2' } });
    const badJson = await http('POST', `${p.urls.api}/pat/login`, { body: '{"token":' });
    expect(badJson).toMatchObject({ status: 400, body: { code: 'BAD_USER_INPUT', field: 'body' } });
  });

  it('answers the PAT endpoints as the OpenAPI document describes them', async () => {
    const conforms = openApiResponseValidator(openApiDocument);
    const pat = await patFor(alice.email, 'READ_WRITE');
    const login = await http('POST', `${p.urls.api}/pat/login`, { body: { token: pat } });
    conforms('POST', '/pat/login', 200, login.body);
    conforms('POST', '/pat/login', 401, (await http('POST', `${p.urls.api}/pat/login`, { body: { token: 'nope' } })).body);
    const activity = await http('GET', `${p.urls.api}/pat/login-activity?limit=5`, { token: login.body.token });
    expect(activity.status).toBe(200);
    conforms('GET', '/pat/login-activity', 200, activity.body);
    const revoked = await http('POST', `${p.urls.api}/pat/revoke`, { token: login.body.token, body: { tokenId: pat.split('.')[0] } });
    expect(revoked.status).toBe(200);
    conforms('POST', '/pat/revoke', 200, revoked.body);
  });

  it('serves /healthz and a bare /readyz publicly, and Prometheus /metrics and the detailed /readyz only on internal listeners', async () => {
    for (const base of [p.urls.api.replace(/\/v1$/, ''), p.urls.login, p.urls.gateway.replace(/\/graphql$/, '')]) {
      expect((await http('GET', `${base}/healthz`)).status).toBe(200);
      expect(await http('GET', `${base}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready' } });
      expect(JSON.stringify((await http('GET', `${base}/readyz`)).body)).not.toMatch(/redis|database/);
      expect((await http('GET', `${base}/metrics`)).status).toBe(404);
    }
    for (const base of Object.values(p.internalUrls)) {
      expect((await http('GET', `${base}/healthz`)).status).toBe(200);
      expect(await http('GET', `${base}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready', checks: expect.any(Object) } });
      const metrics = await http('GET', `${base}/metrics`);
      expect(metrics.body).toContain('http_request_duration_seconds');
      expect(metrics.body).toContain('process_cpu_seconds_total');
    }
  });
});
