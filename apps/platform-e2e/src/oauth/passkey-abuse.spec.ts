import { createRemoteJWKSet, jwtVerify } from 'jose';
import { freePort, http } from '@trading/testing';
import { exchange, extraAuth, loginPath, pkce, provisionApp, type ProvisionedApp } from '../support/oauth-helpers';
import { newUser } from '../support/pat-helpers';
import { SoftwarePasskey } from '../support/software-passkey';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
const MFA = 'urn:trading-api:acr:mfa';

type Answer = { status: number; location?: string; body: string; json: Record<string, unknown> };

/** A browser without WebAuthn of its own: a cookie jar that posts forms and JSON to auth's pages. */
class Visitor {
  constructor(
    private readonly base: string,
    readonly cookies = new Map<string, string>(),
    /** Sent with every request, e.g. the X-Forwarded-For a trusted proxy adds. */
    private readonly headers: Record<string, string> = {},
  ) {}

  /** Another browser holding this one's cookies at this moment (what a captured request carries). */
  copy(): Visitor {
    return new Visitor(this.base, new Map(this.cookies), this.headers);
  }

  async request(method: 'GET' | 'POST', path: string, body?: { form?: Record<string, string>; json?: unknown }): Promise<Answer> {
    const res = await fetch(this.base + path, {
      method,
      redirect: 'manual',
      headers: {
        ...this.headers,
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(body?.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...(body?.json ? { 'content-type': 'application/json' } : {}),
      },
      body: body?.form ? new URLSearchParams(body.form) : body?.json ? JSON.stringify(body.json) : undefined,
    });
    for (const line of res.headers.getSetCookie()) {
      const [name, value] = line.split(';')[0]!.split('=') as [string, string];
      if (/Max-Age=0/.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      /* a page */
    }
    return { status: res.status, location: res.headers.get('location') ?? undefined, body: text, json };
  }
}

type Options = { challenge: string; rpId?: string; allowCredentials?: { id: string }[] };

/**
 * Passkeys attacked over real HTTP (real PostgreSQL and Redis), with assertions a software
 * authenticator signs as a real one would, but for what the attacker chooses: another user's
 * credential at the second step, another origin or RP ID, and an answer sent twice.
 */
describe('passkeys under attack', () => {
  let p: TestPlatform;
  let base: string;
  /** The site's origin and RP ID: auth's public address (http://localhost:<port>). */
  let origin: string;
  const RP_ID = 'localhost';

  async function password(from: Visitor, user: { email: string; password: string }) {
    const form = await from.request('GET', '/en/signin');
    return from.request('POST', '/en/signin', { form: { _csrf: csrfOf(form.body), email: user.email, password: user.password } });
  }

  /** A new user who added a passkey in the dashboard (signed in with the password, no factor yet). */
  async function userWithPasskey() {
    const user = await newUser(p);
    const browser = new Visitor(base);
    expect((await password(browser, user)).location).toBe('/en/developer');
    const csrf = csrfOf((await browser.request('GET', '/en/developer')).body);
    const asked = await browser.request('POST', '/en/developer/security/passkeys/options', { json: { _csrf: csrf, name: 'Laptop' } });
    expect(asked.status).toBe(200);
    const options = asked.json['options'] as { challenge: string; user: { id: string }; rp: { id?: string } };
    expect(options.rp.id).toBe(RP_ID);
    const key = new SoftwarePasskey();
    const added = await browser.request('POST', '/en/developer/security/passkeys', {
      json: { _csrf: csrf, name: 'Laptop', response: key.register(options, origin) },
    });
    expect([added.status, added.json['redirect']]).toEqual([200, '/en/developer#security']);
    return { ...user, key, browser };
  }

  /** Passwordless sign-in: the options a signed-out browser gets (its challenge stays server-side). */
  async function signInOptions(from: Visitor): Promise<{ csrf: string; options: Options }> {
    const csrf = csrfOf((await from.request('GET', '/en/signin')).body);
    const asked = await from.request('POST', '/en/signin/passkey/options', { json: { _csrf: csrf } });
    expect(asked.status).toBe(200);
    return { csrf, options: asked.json['options'] as Options };
  }
  const signIn = (from: Visitor, csrf: string, response: unknown) =>
    from.request('POST', '/en/signin/passkey', { json: { _csrf: csrf, response } });

  /** The second step after `user`'s password: its options (for that user's passkeys). */
  async function secondStepOptions(from: Visitor, user: { email: string; password: string }) {
    expect((await password(from, user)).location).toBe('/en/signin/second-factor');
    const page = await from.request('GET', '/en/signin/second-factor');
    expect(page.body).toContain('id="second-step-passkey"');
    const csrf = csrfOf(page.body);
    const asked = await from.request('POST', '/en/signin/second-factor/passkey/options', { json: { _csrf: csrf } });
    expect(asked.status).toBe(200);
    return { csrf, options: asked.json['options'] as Options };
  }
  const secondStep = (from: Visitor, csrf: string, response: unknown) =>
    from.request('POST', '/en/signin/second-factor/passkey', { json: { _csrf: csrf, response } });

  const signedIn = async (v: Visitor) => (await v.request('GET', '/en/developer')).status === 200;

  /** An OpenID Connect authorization by the signed-in `from` (consent given): `amr` and `acr` of its ID token and of userinfo. */
  async function claimsFor(from: Visitor, app: ProvisionedApp) {
    const { verifier, challenge } = pkce();
    const path = loginPath({
      clientId: app.clientId,
      redirectUri: app.redirectUri,
      scopes: 'openid,read:accounts',
      state: 'st',
      challenge,
      method: 'S256',
      extra: { nonce: 'n-1' },
    });
    const consent = await from.request('GET', path);
    expect([consent.status, consent.location]).toEqual([200, undefined]);
    const request = /name="request" value="([^"]+)"/.exec(consent.body)![1]!;
    const approved = await from.request('POST', '/en/login/consent', {
      form: { _csrf: csrfOf(consent.body), request, decision: 'approve' },
    });
    const code = new URL(approved.location!).searchParams.get('code')!;
    const tokens = await exchange(p, app, { code, verifier, redirectUri: app.redirectUri });
    expect(tokens.status).toBe(200);
    const issuer = (await http('GET', `${base}/.well-known/openid-configuration`)).body.issuer;
    const { payload } = await jwtVerify(tokens.body.id_token, createRemoteJWKSet(new URL(`${base}/.well-known/jwks.json`)), {
      issuer,
      audience: app.clientId,
    });
    const userinfo = await http('GET', `${p.urls.api}/oauth/userinfo`, { token: tokens.body.access_token });
    return { idToken: [payload.amr, payload.acr], userinfo: [userinfo.body.amr, userinfo.body.acr] };
  }

  beforeAll(async () => {
    const port = await freePort();
    p = await startTestPlatform({ AUTH_PORT: String(port) });
    base = p.urls.login;
    origin = `http://localhost:${port}`;
  }, 60_000);
  afterAll(() => p?.stop());

  it('signs in with the passkey alone (amr hwk, acr mfa) and after the password (amr pwd and hwk)', async () => {
    const user = await userWithPasskey();
    const app = await provisionApp(p, { scopes: ['read:accounts'] });

    const alone = new Visitor(base);
    const { csrf, options } = await signInOptions(alone);
    // Discoverable: the browser chooses among the passkeys it holds; the server names none.
    expect(options.allowCredentials ?? []).toEqual([]);
    const done = await signIn(alone, csrf, user.key.assert({ challenge: options.challenge, origin, rpId: RP_ID }));
    expect([done.status, done.json['redirect']]).toEqual([200, '/en/developer']);
    expect(await signedIn(alone)).toBe(true);

    // An app's ID token and userinfo say how.
    await expect(claimsFor(alone, app)).resolves.toEqual({ idToken: [['hwk'], MFA], userinfo: [['hwk'], MFA] });

    const after = new Visitor(base);
    const step = await secondStepOptions(after, user);
    expect(step.options.allowCredentials?.map((c) => c.id)).toEqual([user.key.id]);
    const finished = await secondStep(after, step.csrf, user.key.assert({ challenge: step.options.challenge, origin, rpId: RP_ID }));
    expect([finished.status, finished.json['redirect']]).toEqual([200, '/en/developer']);
    expect(await signedIn(after)).toBe(true);
    await expect(claimsFor(after, app)).resolves.toEqual({ idToken: [['pwd', 'hwk'], MFA], userinfo: [['pwd', 'hwk'], MFA] });

    // Both are in the security log as passkey sign-ins.
    const events = await p.auth.dataSource.query(
      `SELECT type, detail FROM security_events WHERE user_id = $1 AND type IN ('sign_in', 'passkey_sign_in') ORDER BY occurred_at`,
      [user.id],
    );
    expect(events.slice(-2)).toEqual([
      { type: 'passkey_sign_in', detail: {} },
      { type: 'sign_in', detail: { factor: 'passkey' } },
    ]);
  });

  it("attack: after the victim's password, an assertion by the attacker's own passkey is refused", async () => {
    const victim = await userWithPasskey();
    const attacker = await userWithPasskey();
    const browser = new Visitor(base);
    const { csrf, options } = await secondStepOptions(browser, victim);
    // A perfectly signed assertion, for this very challenge, origin and RP ID: by a credential of another account.
    const refused = await secondStep(browser, csrf, attacker.key.assert({ challenge: options.challenge, origin, rpId: RP_ID }));
    expect(refused.status).toBe(401);
    expect(refused.json).toMatchObject({ code: 'UNAUTHENTICATED', field: 'response' });
    expect(refused.body).not.toMatch(/redirect/);
    expect(await signedIn(browser)).toBe(false);

    // The victim's own passkey, on a new challenge, still signs the victim in.
    const owner = new Visitor(base);
    const step = await secondStepOptions(owner, victim);
    const ok = await secondStep(owner, step.csrf, victim.key.assert({ challenge: step.options.challenge, origin, rpId: RP_ID }));
    expect(ok.status).toBe(200);
    expect(await signedIn(owner)).toBe(true);
  });

  it('attack: an assertion made for another origin, or for another RP ID, is refused', async () => {
    const user = await userWithPasskey();
    const phished = new Visitor(base);
    let asked = await signInOptions(phished);
    // What a look-alike site relaying this site's challenge gets from the authenticator: its own origin in clientDataJSON.
    const otherOrigin = await signIn(
      phished,
      asked.csrf,
      user.key.assert({ challenge: asked.options.challenge, origin: 'http://localhost.evil.example', rpId: RP_ID }),
    );
    expect(otherOrigin.status).toBe(401);
    expect(await signedIn(phished)).toBe(false);

    asked = await signInOptions(phished);
    const otherRp = await signIn(
      phished,
      asked.csrf,
      user.key.assert({ challenge: asked.options.challenge, origin, rpId: 'evil.example' }),
    );
    expect(otherRp.status).toBe(401);
    expect(await signedIn(phished)).toBe(false);

    asked = await signInOptions(phished);
    const right = await signIn(phished, asked.csrf, user.key.assert({ challenge: asked.options.challenge, origin, rpId: RP_ID }));
    expect(right.status).toBe(200);
    expect(await signedIn(phished)).toBe(true);
  });

  it('attack: an assertion sent again, with the same challenge, is refused (its signature counter stays 0, as synced passkeys do)', async () => {
    const user = await userWithPasskey();
    const browser = new Visitor(base);
    const { csrf, options } = await signInOptions(browser);
    const assertion = user.key.assert({ challenge: options.challenge, origin, rpId: RP_ID });
    // Captured as sent: the body and the cookies that went with it.
    const captured = browser.copy();
    expect((await signIn(browser, csrf, assertion)).status).toBe(200);

    const replayed = await signIn(captured, csrf, assertion);
    expect(replayed.status).toBe(401);
    expect(replayed.json).toMatchObject({ code: 'UNAUTHENTICATED', field: 'response' });
    expect(await signedIn(captured)).toBe(false);
    // On a fresh challenge, the old answer fits nothing either.
    const again = new Visitor(base);
    const fresh = await signInOptions(again);
    expect((await signIn(again, fresh.csrf, assertion)).status).toBe(401);
    expect(await signedIn(again)).toBe(false);
  });

  it('attack: a session without a second factor in the last ten minutes neither adds nor removes a passkey', async () => {
    // `browser` signed in with the password alone, before its passkey was added: a stolen session of that kind.
    const user = await userWithPasskey();
    const { browser } = user;
    const page = await browser.request('GET', '/en/developer');
    const csrf = csrfOf(page.body);
    const passkeyId = /data-passkey-id="([0-9a-f-]{36})"/.exec(page.body)![1]!;

    const add = await browser.request('POST', '/en/developer/security/passkeys/options', { json: { _csrf: csrf, name: 'Mine now' } });
    expect(add.status).toBe(403);
    expect(add.json).toMatchObject({ code: 'FORBIDDEN', field: 'session' });
    const remove = await browser.request('POST', `/en/developer/security/passkeys/${passkeyId}/remove`, { form: { _csrf: csrf } });
    expect([remove.status, remove.location]).toEqual([303, '/en/developer/security/confirm?next=%2Fen%2Fdeveloper']);
    await expect(p.auth.dataSource.query('SELECT count(*)::int AS n FROM passkeys WHERE user_id = $1', [user.id])).resolves.toEqual([
      { n: 1 },
    ]);

    // Confirmed with the passkey, the same session may.
    const asked = await browser.request('POST', '/en/developer/security/confirm/passkey/options', { json: { _csrf: csrf } });
    const options = asked.json['options'] as Options;
    const confirmed = await browser.request('POST', '/en/developer/security/confirm/passkey', {
      json: { _csrf: csrf, response: user.key.assert({ challenge: options.challenge, origin, rpId: RP_ID }) },
    });
    expect([confirmed.status, confirmed.json['redirect']]).toEqual([200, '/en/developer#create-token']);
    const removed = await browser.request('POST', `/en/developer/security/passkeys/${passkeyId}/remove`, { form: { _csrf: csrf } });
    expect(removed.location).toBe('/en/developer#security');
    await expect(p.auth.dataSource.query('SELECT count(*)::int AS n FROM passkeys WHERE user_id = $1', [user.id])).resolves.toEqual([
      { n: 0 },
    ]);
  });

  it('answers bad input with a stable code and field, never a server error', async () => {
    const user = await userWithPasskey();
    const csrf = csrfOf((await user.browser.request('GET', '/en/developer')).body);
    const noName = await user.browser.request('POST', '/en/developer/security/passkeys/options', { json: { _csrf: csrf, name: ' ' } });
    expect([noName.status, noName.json['code'], noName.json['field']]).toEqual([400, 'BAD_USER_INPUT', 'name']);
    const longName = await user.browser.request('POST', '/en/developer/security/passkeys/options', {
      json: { _csrf: csrf, name: 'x'.repeat(101) },
    });
    expect([longName.status, longName.json['field']]).toEqual([400, 'name']);

    const stranger = new Visitor(base);
    const { csrf: signInCsrf } = await signInOptions(stranger);
    for (const response of [undefined, 'garbage', { id: 42 }, { id: user.key.id, response: { clientDataJSON: '%%%' } }]) {
      const answer = await signIn(stranger, signInCsrf, response);
      expect([answer.status, answer.json['code'], answer.json['field']]).toEqual([401, 'UNAUTHENTICATED', 'response']);
      await signInOptions(stranger);
    }
    // No challenge at all (none asked for), and a malformed body.
    expect((await signIn(new Visitor(base), signInCsrf, {})).status).toBe(403);
    const malformed = await fetch(`${base}/en/signin/passkey`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(malformed.status).toBe(400);
    await expect(malformed.json()).resolves.toMatchObject({ code: 'BAD_USER_INPUT', field: 'body' });
  });

  it('attack: forged assertions spend their own address’s budget (then 429 before any is checked); the user elsewhere signs in', async () => {
    const user = await userWithPasskey();
    // Auth behind a trusted proxy: each visitor's X-Forwarded-For is its address. Same issuer, so the same RP ID and origin.
    const proxied = await extraAuth(p, { AUTH_TRUST_PROXY: ['loopback'] });
    try {
      const forger = new Visitor(proxied.url, new Map(), { 'x-forwarded-for': '203.0.113.66' });
      const unknownKey = new SoftwarePasskey();
      const answers: number[] = [];
      for (let i = 0; i < 60 && answers.at(-1) !== 429; i++) {
        const asked = await signInOptions(forger);
        answers.push(
          (await signIn(forger, asked.csrf, unknownKey.assert({ challenge: asked.options.challenge, origin, rpId: RP_ID }))).status,
        );
      }
      // Every refusal counted, then the address is stopped: the default budget is 50 per window.
      expect(answers.slice(0, -1).every((s) => s === 401)).toBe(true);
      expect(answers.length).toBe(51);
      const asked = await signInOptions(forger);
      const stopped = await signIn(forger, asked.csrf, user.key.assert({ challenge: asked.options.challenge, origin, rpId: RP_ID }));
      expect([stopped.status, stopped.json['code'], stopped.json['field']]).toEqual([429, 'RATE_LIMITED', 'response']);
      expect(await signedIn(forger)).toBe(false);
      // The user, at their own address, signs in with the passkey meanwhile.
      const owner = new Visitor(proxied.url, new Map(), { 'x-forwarded-for': '198.51.100.7' });
      const mine = await signInOptions(owner);
      const signed = await signIn(owner, mine.csrf, user.key.assert({ challenge: mine.options.challenge, origin, rpId: RP_ID }));
      expect(signed.status).toBe(200);
      expect(await signedIn(owner)).toBe(true);
    } finally {
      await proxied.close();
    }
  });
});
