import { createHmac, randomBytes } from 'node:crypto';
import { createCryptoPlugin } from '@otplib/core';
import { generate } from '@otplib/totp';
import { CookieBrowser } from '@trading/testing';
import { extraAuth } from '../support/oauth-helpers';
import { newUser } from '../support/pat-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

/** otplib's TOTP (SHA-1, six digits, 30 s), HMAC from Node: what an authenticator app shows at `epoch`. */
const nodeCrypto = createCryptoPlugin({
  hmac: (algorithm, key, data) => new Uint8Array(createHmac(algorithm, key).update(data).digest()),
  randomBytes: (length) => new Uint8Array(randomBytes(length)),
});
function base32Bytes(text: string): Uint8Array {
  const out: number[] = [];
  let value = 0;
  let bits = 0;
  for (const c of text.replace(/\s/g, '')) {
    value = (value << 5) | 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'.indexOf(c);
    bits += 5;
    if (bits >= 8) out.push((value >>> (bits -= 8)) & 255);
  }
  return new Uint8Array(out);
}
const codeAt = (secret: string, epoch: number) => generate({ secret: base32Bytes(secret), crypto: nodeCrypto, epoch });
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
    return { ...user, secret, nextCode: () => codeAt(secret, (Math.floor(now / 30) + 1) * 30) };
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
});
