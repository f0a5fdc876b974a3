/**
 * A minimal vendor backend doing the whole flow of spec §5.1 against the Trading API, written
 * to be read: PKCE verifier and challenge, redirect to the login page, callback with a state
 * check, code exchange (spec §4.1, JSON), an API call, and a refresh when the access token has
 * expired (the new refresh token replaces the old one). No framework beyond Express, no
 * OAuth library: every step is visible here. API calls go through the client generated from
 * the API's OpenAPI document (@trading/api-client), so they are typed end to end.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import { createTradingApiClient } from '@trading/api-client';

export interface SampleVendorConfig {
  clientId: string;
  clientSecret: string;
  /** Registered for the app in the environment it talks to, exactly as sent. */
  redirectUri: string;
  /** {login_url}, e.g. http://localhost:8081 */
  loginUrl: string;
  /** {base_url}, e.g. http://localhost:8080/v1 */
  apiUrl: string;
  scopes: string[];
  locale: string;
}

interface Tokens {
  accessToken: string;
  refreshToken: string;
  /** Epoch ms. */
  expiresAt: number;
  scope: string;
}

/** One visitor of the vendor's site. A real app keeps this in its own session store or database. */
interface VisitorSession {
  /** Between the redirect to the login page and the callback (spec §5.1 steps 1–5). */
  pending?: { state: string; verifier: string };
  tokens?: Tokens;
  refreshes: number;
  /** The refresh in flight: a refresh token works once, and a second use revokes the whole grant. */
  refreshing?: Promise<void>;
}

const COOKIE = 'vendor_session';
const base64url = (bytes: Buffer) => bytes.toString('base64url');

/** Step 1–2: a random verifier (43–128 characters) and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = base64url(randomBytes(48)); // 64 characters of [A-Za-z0-9_-]
  return { verifier, challenge: base64url(createHash('sha256').update(verifier).digest()) };
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)} · Sample vendor</title></head><body><h1>Sample vendor app</h1>${body}</body></html>`;

const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><rect width="64" height="64" rx="12" fill="#0f766e"/><path d="M14 44 L26 30 L36 38 L50 20" stroke="#fff" stroke-width="5" fill="none" stroke-linecap="round"/></svg>`;

export function createSampleVendorApp(config: SampleVendorConfig): express.Express {
  const sessions = new Map<string, VisitorSession>();
  const app = express();
  app.disable('x-powered-by');

  function session(req: Request, res: Response): VisitorSession {
    const id = /(?:^|;\s*)vendor_session=([A-Za-z0-9_-]{43})/.exec(req.get('cookie') ?? '')?.[1];
    if (id && sessions.has(id)) return sessions.get(id)!;
    const fresh = base64url(randomBytes(32));
    const created: VisitorSession = { refreshes: 0 };
    sessions.set(fresh, created);
    res.append('Set-Cookie', `${COOKIE}=${fresh}; Path=/; HttpOnly; SameSite=Lax`);
    return created;
  }

  const client = createTradingApiClient({ baseUrl: config.apiUrl });
  const bearer = (accessToken: string) => ({ headers: { authorization: `Bearer ${accessToken}` } });

  /** POST /oauth/token with a JSON body; the secret never leaves this backend. */
  async function token(
    grant:
      | { grant_type: 'AUTH_CODE'; code: string; redirect_uri: string; code_verifier: string }
      | { grant_type: 'REFRESH_TOKEN'; refresh_token: string },
  ): Promise<Tokens> {
    const { data, error, response } = await client.POST('/oauth/token', {
      body: { ...grant, client_id: config.clientId, client_secret: config.clientSecret },
    });
    if (!data) throw new Error(`token endpoint answered ${response.status}: ${error?.error} (${error?.error_description})`);
    return {
      accessToken: data.access_token,
      refreshToken: data.refresh_token,
      expiresAt: Date.now() + data.expires_in * 1000,
      scope: data.scope,
    };
  }

  /**
   * Step 8: refresh, and keep the new refresh token (the old one is spent). Concurrent callers
   * share one refresh: presenting a spent refresh token revokes the grant (RFC 9700 reuse detection).
   */
  function refresh(s: VisitorSession, stale: Tokens): Promise<void> {
    if (s.tokens !== stale) return Promise.resolve(); // someone refreshed already
    s.refreshing ??= token({ grant_type: 'REFRESH_TOKEN', refresh_token: stale.refreshToken })
      .then((fresh) => {
        s.tokens = fresh;
        s.refreshes++;
      })
      .finally(() => (s.refreshing = undefined));
    return s.refreshing;
  }

  /** Step 7, refreshing first when the access token has expired (or is about to), and once more on a 401. */
  async function api<T extends { response: globalThis.Response }>(
    s: VisitorSession,
    request: (accessToken: string) => Promise<T>,
  ): Promise<T> {
    if (s.refreshing) await s.refreshing;
    if (s.tokens!.expiresAt - 30_000 <= Date.now()) await refresh(s, s.tokens!);
    const used = s.tokens!;
    let answer = await request(s.tokens!.accessToken);
    if (answer.response.status === 401) {
      await refresh(s, used);
      answer = await request(s.tokens!.accessToken);
    }
    return answer;
  }

  app.get('/logo.svg', (_req, res) => void res.type('image/svg+xml').send(LOGO));

  app.get('/', (req, res) => {
    const s = session(req, res);
    res.send(
      page(
        'Home',
        s.tokens
          ? `<p id="status">Connected (scope: ${escape(s.tokens.scope)}).</p><p><a id="accounts-link" href="/accounts">See your accounts</a></p>`
          : `<p id="status">Not connected.</p><p><a id="connect" href="/connect">Connect your Trading API account</a></p>`,
      ),
    );
  });

  // Steps 1–3: verifier, challenge and state kept server-side; the browser goes to the login page.
  app.get('/connect', (req, res) => {
    const s = session(req, res);
    const { verifier, challenge } = pkcePair();
    const state = base64url(randomBytes(24));
    s.pending = { state, verifier };
    const url = new URL(`${config.loginUrl}/${config.locale}/login`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: config.clientId,
      redirect_uri: config.redirectUri,
      scopes: config.scopes.join(','),
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString();
    res.redirect(302, url.toString());
  });

  // Steps 4–6: the state must be the one stored (CSRF), then the code is exchanged from this backend.
  app.get('/callback', async (req, res) => {
    const s = session(req, res);
    const pending = s.pending;
    s.pending = undefined; // one callback per authorization request
    const state = typeof req.query['state'] === 'string' ? req.query['state'] : '';
    const same = pending && state.length === pending.state.length && timingSafeEqual(Buffer.from(state), Buffer.from(pending.state));
    if (!same)
      return void res
        .status(400)
        .send(page('Error', '<p id="error">The state does not match this browser\'s request: refusing the callback.</p>'));
    if (typeof req.query['error'] === 'string') {
      const why = typeof req.query['error_description'] === 'string' ? req.query['error_description'] : '';
      return void res
        .status(403)
        .send(
          page(
            'Not connected',
            `<p id="error">Access was not granted: <code>${escape(req.query['error'])}</code> ${escape(why)}</p><p><a href="/">Back</a></p>`,
          ),
        );
    }
    const code = typeof req.query['code'] === 'string' ? req.query['code'] : '';
    try {
      s.tokens = await token({ grant_type: 'AUTH_CODE', code, redirect_uri: config.redirectUri, code_verifier: pending!.verifier });
    } catch (err) {
      return void res.status(502).send(page('Error', `<p id="error">${escape((err as Error).message)}</p>`));
    }
    res.redirect(303, '/accounts');
  });

  app.get('/accounts', async (req, res) => {
    const s = session(req, res);
    if (!s.tokens) return void res.redirect(303, '/');
    try {
      const [me, accounts] = await Promise.all([
        api(s, (accessToken) => client.GET('/oauth/userinfo', bearer(accessToken))),
        api(s, (accessToken) => client.GET('/accounts', bearer(accessToken))),
      ]);
      if (accounts.response.status === 401) throw new Error('The Trading API no longer accepts this connection');
      if (!accounts.data)
        return void res
          .status(502)
          .send(
            page(
              'Error',
              `<p id="error">GET /accounts answered ${accounts.response.status}: ${escape(JSON.stringify(accounts.error))}</p>`,
            ),
          );
      res.send(
        page(
          'Accounts',
          `<p id="who">Hello ${escape(me.data?.firstName ?? '')} ${escape(me.data?.lastName ?? '')}</p>` +
            `<ul id="accounts">${accounts.data.accounts.map((a) => `<li>${escape(a.number)} (${escape(a.type)}, ${escape(a.baseCurrency)})</li>`).join('')}</ul>` +
            `<p id="refreshes">Token refreshed ${s.refreshes} time(s); access token valid until ${new Date(s.tokens.expiresAt).toISOString()}.</p>` +
            `<form method="post" action="/expire"><button id="expire" type="submit">Pretend the access token expired</button></form>` +
            `<form method="post" action="/disconnect"><button id="disconnect" type="submit">Disconnect</button></form>`,
        ),
      );
    } catch (err) {
      s.tokens = undefined; // e.g. the user revoked the app: connect again
      res
        .status(401)
        .send(page('Disconnected', `<p id="error">${escape((err as Error).message)}</p><p><a href="/connect">Connect again</a></p>`));
    }
  });

  // For trying step 8 without waiting an hour.
  app.post('/expire', (req, res) => {
    const s = session(req, res);
    if (s.tokens) s.tokens.expiresAt = Date.now() - 1000;
    res.redirect(303, '/accounts');
  });

  // RFC 7009: revoking the refresh token ends the whole grant.
  app.post('/disconnect', async (req, res) => {
    const s = session(req, res);
    if (s.tokens) {
      await client
        .POST('/oauth/revoke', {
          body: {
            token: s.tokens.refreshToken,
            token_type_hint: 'refresh_token',
            client_id: config.clientId,
            client_secret: config.clientSecret,
          },
        })
        .catch(() => undefined);
      s.tokens = undefined;
    }
    res.redirect(303, '/');
  });
  return app;
}
