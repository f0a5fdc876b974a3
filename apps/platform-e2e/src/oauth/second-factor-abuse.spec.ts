import { createHash, randomBytes } from 'node:crypto';
import { deriveServiceSecret } from '@trading/auth';
import { SealedStore } from '@trading/redis';
import { CookieBrowser } from '@trading/testing';
import { codeAt } from '../support/authenticator';
import { extraAuth } from '../support/oauth-helpers';
import { newUser, utcDate } from '../support/pat-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)![1]!;

/**
 * The authenticator app at sign-in, attacked over HTTP by someone who knows the password. Auth
 * runs behind a trusted proxy (loopback), so each visitor's X-Forwarded-For is its address.
 */
describe('second factor under attack', () => {
  let p: TestPlatform;
  let auth: Awaited<ReturnType<typeof extraAuth>>;
  const visitor = (address: string) => new CookieBrowser(auth.url, { 'x-forwarded-for': address });

  /** E-mail and password: the answer of the password form. */
  async function password(from: CookieBrowser, user: { email: string; password: string }) {
    const form = await from.request('GET', '/en/signin');
    return from.request('POST', '/en/signin', { _csrf: csrfOf(form.body), email: user.email, password: user.password });
  }
  /** The second step's form, sent with `code`. */
  async function secondStep(from: CookieBrowser, code: string) {
    const form = await from.request('GET', '/en/signin/second-factor');
    expect(form.status).toBe(200);
    return from.request('POST', '/en/signin/second-factor', { _csrf: csrfOf(form.body), code });
  }

  /** A new user with an authenticator app set up in the dashboard: its secret, and the time step its first code used. */
  async function enrolledUser() {
    const user = await newUser(p);
    const browser = visitor('192.0.2.1');
    expect((await password(browser, user)).location).toBe('/en/developer');
    const dashboard = await browser.request('GET', '/en/developer');
    const csrf = csrfOf(dashboard.body);
    expect((await browser.request('POST', '/en/developer/security/totp', { _csrf: csrf })).location).toBe('/en/developer/security/totp');
    const setup = await browser.request('GET', '/en/developer/security/totp');
    const secret = /data-secret="([A-Z2-7]+)"/.exec(setup.body)![1]!;
    const now = Math.floor(Date.now() / 1000);
    const confirmed = await browser.request('POST', '/en/developer/security/totp/confirm', {
      _csrf: csrf,
      code: await codeAt(secret, now),
    });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.match(/<li><code>[2-9a-z]{5}-[2-9a-z]{5}<\/code><\/li>/g)).toHaveLength(10);
    // The first code's step is spent: the next sign-in uses the code of the step after it.
    // `browser` stays signed in with the password alone (the factor came after its sign-in).
    return { ...user, secret, browser, nextCode: () => codeAt(secret, (Math.floor(now / 30) + 1) * 30) };
  }

  beforeAll(async () => {
    p = await startTestPlatform();
    auth = await extraAuth(p, { AUTH_TRUST_PROXY: ['loopback'] });
  }, 60_000);
  afterAll(async () => {
    await auth?.close();
    await p?.stop();
  });

  it('issues no session before the second step: the half-signed-in cookie opens nothing', async () => {
    const user = await enrolledUser();
    const browser = visitor('198.51.100.1');
    const answer = await password(browser, user);
    expect([answer.status, answer.location]).toEqual([303, '/en/signin/second-factor']);
    expect(answer.headers.getSetCookie().join('\n')).not.toMatch(/tapi_session=/);
    expect(answer.headers.getSetCookie().join('\n')).toMatch(/tapi_signin_2fa=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=300/);
    // The dashboard, its forms and the OAuth login all see a signed-out browser.
    const dashboard = await browser.request('GET', '/en/developer');
    expect([dashboard.status, dashboard.location]).toEqual([303, '/en/signin?next=%2Fen%2Fdeveloper']);
    expect((await browser.request('GET', '/en/signin')).status).toBe(200);

    const done = await secondStep(browser, await user.nextCode());
    expect([done.status, done.location]).toEqual([303, '/en/developer']);
    expect(done.headers.getSetCookie().join('\n')).toMatch(/tapi_session=/);
    expect((await browser.request('GET', '/en/developer')).status).toBe(200);
  });

  it('refuses a code already used, even from a new sign-in', async () => {
    const user = await enrolledUser();
    const code = await user.nextCode();
    const first = visitor('198.51.100.2');
    await password(first, user);
    expect((await secondStep(first, code)).location).toBe('/en/developer');

    const again = visitor('198.51.100.3');
    expect((await password(again, user)).location).toBe('/en/signin/second-factor');
    const replayed = await secondStep(again, code);
    expect(replayed.status).toBe(401);
    expect(replayed.body).toContain('That code is not right, or was already used.');
    expect((await again.request('GET', '/en/developer')).location).toMatch(/^\/en\/signin/);
  });

  it("stops a guesser at the guesser's address while the user's right code, from elsewhere, still works", async () => {
    const user = await enrolledUser();
    const right = await user.nextCode();
    const now = Math.floor(Date.now() / 1000);
    const valid = await Promise.all([-1, 0, 1, 2].map((k) => codeAt(user.secret, now + 30 * k)));
    const wrong = (i: number) => {
      for (let n = i; ; n++) {
        const guess = String(n * 7919)
          .padStart(6, '0')
          .slice(-6);
        if (!valid.includes(guess)) return guess;
      }
    };
    const guesser = visitor('203.0.113.66');
    await password(guesser, user);
    for (let i = 0; i < 5; i++) expect((await secondStep(guesser, wrong(i * 13))).status).toBe(401);
    // Past the limit, even the right code is refused there (and not spent).
    const blocked = await secondStep(guesser, right);
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(blocked.body).toContain('Too many wrong codes.');
    expect((await guesser.request('GET', '/en/developer')).location).toMatch(/^\/en\/signin/);

    const owner = visitor('198.51.100.77');
    expect((await password(owner, user)).location).toBe('/en/signin/second-factor');
    const signedIn = await secondStep(owner, right);
    expect([signedIn.status, signedIn.location]).toEqual([303, '/en/developer']);
    expect((await owner.request('GET', '/en/developer')).status).toBe(200);
    // The security log has the owner's sign-in, finished with a code; the guesser never signed in.
    const signIns = await p.auth.dataSource.query(
      `SELECT e.client_address, e.detail FROM security_events e JOIN users u ON u.id = e.user_id
        WHERE u.email = $1 AND e.type = 'sign_in' AND e.client_address IN ('203.0.113.66', '198.51.100.77')`,
      [user.email],
    );
    expect(signIns).toEqual([{ client_address: '198.51.100.77', detail: { factor: 'otp' } }]);
  });

  /** The dashboard's create form, posted as a script would: no page in between. */
  async function createToken(from: CookieBrowser, scope: 'READ_ONLY' | 'READ_WRITE') {
    const csrf = csrfOf((await from.request('GET', '/en/developer')).body);
    const name = `step-up-${scope}-${randomBytes(3).toString('hex')}`;
    const answer = await from.request('POST', '/en/developer/tokens', { _csrf: csrf, name, scope, ips: '', expires: utcDate(30) });
    return { ...answer, name };
  }
  const tokensOf = async (userId: string): Promise<{ name: string; access: string }[]> =>
    p.auth.dataSource.query(`SELECT name, access FROM personal_access_tokens WHERE user_id = $1 ORDER BY created_at`, [userId]);
  const userIdOf = async (email: string) => (await p.auth.users.findByEmail(email))!.id;

  it('attack: a READ_WRITE token posted straight to the create form, without a recent code, is refused; a code makes it', async () => {
    const user = await enrolledUser();
    const userId = await userIdOf(user.email);
    const { browser } = user;
    // The page asks for the code first.
    const page = await browser.request('GET', '/en/developer');
    expect(page.body).toContain('id="step-up-form"');
    expect(page.body).toContain('A read-and-write token needs a code from your authenticator app first');

    const refused = await createToken(browser, 'READ_WRITE');
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('A read-and-write token needs a code from your authenticator app first');
    // READ_ONLY needs no code.
    const readOnly = await createToken(browser, 'READ_ONLY');
    expect([readOnly.status, readOnly.location]).toEqual([303, '/en/developer']);
    expect(await tokensOf(userId)).toEqual([{ name: readOnly.name, access: 'READ_ONLY' }]);

    // PATs are made in the dashboard only: no API takes a password (or anything else of the user's) to make one.
    for (const path of ['/pat/create', '/pat', '/pats'])
      expect(
        (
          await fetch(`${auth.url}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email: user.email, password: user.password, scope: 'READ_WRITE' }),
          })
        ).status,
      ).toBe(404);

    // A wrong code confirms nothing; a right one does, for this session.
    const csrf = csrfOf((await browser.request('GET', '/en/developer/security/confirm')).body);
    const right = await user.nextCode();
    const wrong = await browser.request('POST', '/en/developer/security/confirm', {
      _csrf: csrf,
      code: right === '000000' ? '111111' : '000000',
    });
    expect(wrong.status).toBe(401);
    expect((await createToken(browser, 'READ_WRITE')).status).toBe(403);
    const confirmed = await browser.request('POST', '/en/developer/security/confirm', { _csrf: csrf, code: right });
    expect([confirmed.status, confirmed.location]).toEqual([303, '/en/developer#create-token']);
    expect((await browser.request('GET', '/en/developer')).body).not.toContain('id="step-up-form"');
    const made = await createToken(browser, 'READ_WRITE');
    expect([made.status, made.location]).toEqual([303, '/en/developer']);
    expect(await tokensOf(userId)).toEqual([
      { name: readOnly.name, access: 'READ_ONLY' },
      { name: made.name, access: 'READ_WRITE' },
    ]);
  });

  it('counts a code at the sign-in second step as recent; a code given over ten minutes ago is not', async () => {
    const user = await enrolledUser();
    const userId = await userIdOf(user.email);
    const browser = visitor('198.51.100.9');
    await password(browser, user);
    const done = await secondStep(browser, await user.nextCode());
    expect(done.location).toBe('/en/developer');
    const made = await createToken(browser, 'READ_WRITE');
    expect(made.status).toBe(303);
    expect(await tokensOf(userId)).toEqual([{ name: made.name, access: 'READ_WRITE' }]);

    // The session as auth keeps it in Redis, its code moved back eleven minutes: the form asks again.
    const cookie = /tapi_session=([^;]+)/.exec(done.headers.getSetCookie().join('\n'))![1]!;
    const sealed = new SealedStore(p.store, deriveServiceSecret(p.identityOf('auth').SERVICE_KEY, 'redis-records'));
    const key = `browser-session:${createHash('sha256').update(cookie).digest('base64url')}`;
    const session = JSON.parse((await sealed.get(key))!);
    expect(session).toMatchObject({ userId, amr: ['pwd', 'otp'], secondFactorAt: expect.any(Number) });
    await sealed.set(key, JSON.stringify({ ...session, secondFactorAt: session.secondFactorAt - 11 * 60 * 1000 }), 600);
    expect((await createToken(browser, 'READ_WRITE')).status).toBe(403);
    expect((await createToken(browser, 'READ_ONLY')).status).toBe(303);
  });

  it('leaves a user without a second factor unaffected', async () => {
    const user = await newUser(p);
    const browser = visitor('198.51.100.10');
    expect((await password(browser, user)).location).toBe('/en/developer');
    expect((await browser.request('GET', '/en/developer')).body).not.toContain('id="step-up-form"');
    const made = await createToken(browser, 'READ_WRITE');
    expect([made.status, made.location]).toEqual([303, '/en/developer']);
    expect(await tokensOf(user.id)).toEqual([{ name: made.name, access: 'READ_WRITE' }]);
  });
});
