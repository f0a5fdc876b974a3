/**
 * A minimal vendor backend doing the whole authorization code flow with PKCE against the Trading API, written
 * to be read: PKCE verifier and challenge, redirect to the login page, callback with a state
 * check, code exchange, API calls, and a refresh when the access token has expired (the new
 * refresh token replaces the old one). No framework beyond Express, no OAuth library: every step
 * is visible here and in ./oauth.ts.
 *
 * Two profiles (SAMPLE_VENDOR_PROFILE):
 *  - plain: authorization code + PKCE, the client secret in the token request, Bearer tokens.
 *  - fapi2: the FAPI 2.0 Security Profile's client side: the authorization request pushed first
 *    (PAR, RFC 9126), private_key_jwt client authentication (RFC 7523), DPoP-bound tokens with a
 *    proof on every call (RFC 9449), and OpenID Connect sign-in (an ID token verified with the
 *    server's JWKS, its nonce checked).
 *
 * What a vendor's dashboard shows: the user's accounts, balances, positions with their value,
 * live quotes and orders (the page asks this backend for them every few seconds; no token ever
 * reaches the browser), and a form that places a bracket order with an Idempotency-Key. API
 * calls go through the client generated from the API's OpenAPI document (@trading/api-client's
 * types), so they are typed end to end.
 */
import { timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import express, { type Request, type Response } from 'express';
import { DpopKey, pkcePair, postForm, randomValue, verifyIdToken } from './oauth';
import { dashboardPage, escape, LOGO, page, type Dashboard } from './pages';
import { VendorClient, type SampleVendorConfig, type VisitorSession } from './vendor-client';

export type { SampleVendorConfig } from './vendor-client';

/** The page may load its own stylesheet, script and images, and send forms to itself: nothing else. */
const CSP =
  "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export function createSampleVendorApp(config: SampleVendorConfig): express.Express {
  const vendor = new VendorClient(config);
  const app = express();
  app.disable('x-powered-by');
  app.use(express.urlencoded({ extended: false, limit: '10kb' }));
  app.use((_req, res, next) => {
    res.setHeader('Content-Security-Policy', CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });
  serveFiles(app, vendor);
  app.get('/', (req, res) => home(vendor, req, res));
  app.get('/connect', (req, res) => connect(vendor, req, res));
  app.get('/callback', (req, res) => callback(vendor, req, res));
  app.get('/accounts', (req, res) => dashboard(vendor, req, res));
  app.get('/live.json', (req, res) => liveJson(vendor, req, res));
  app.post('/orders', (req, res) => placeOrder(vendor, req, res));
  // For trying step 8 without waiting an hour.
  app.post('/expire', (req, res) => {
    const s = vendor.session(req, res);
    if (s.tokens) s.tokens.expiresAt = Date.now() - 1000;
    res.redirect(303, '/accounts');
  });
  app.post('/disconnect', (req, res) => disconnect(vendor, req, res));
  return app;
}

// -------------------------------------------------------------------------------------------------
// Static files, the app's public keys, a debug view
// -------------------------------------------------------------------------------------------------

function serveFiles(app: express.Express, vendor: VendorClient): void {
  const config = vendor.config;
  app.get('/logo.svg', (_req, res) => void res.type('image/svg+xml').send(LOGO));
  app.get('/style.css', (_req, res) => res.sendFile(join(__dirname, 'public/style.css')));
  app.get('/live.js', (_req, res) => res.sendFile(join(__dirname, 'public/live.js')));

  // fapi2: the public half of the app's signing key, for the operator to register (`apps promote --jwks-file`).
  app.get('/jwks.json', (_req, res) => {
    if (!config.clientKey) return void res.status(404).json({ error: 'not_found' });
    res.json({ keys: [config.clientKey.publicJwk] });
  });

  // What this session holds, without any secret: handy when trying the profiles (and for the tests).
  app.get('/debug/session', (req, res) => {
    const s = vendor.session(req, res);
    res.json({
      profile: vendor.profile,
      connected: !!s.tokens,
      tokenType: s.tokens?.tokenType ?? null,
      lastAuthScheme: s.lastAuthScheme ?? null,
      dpopThumbprint: s.dpop?.thumbprint ?? null,
      dpopNonceRetries: s.dpop?.nonceRetries ?? 0,
      scope: s.tokens?.scope ?? null,
      refreshes: s.refreshes,
      idTokenSubject: s.user?.sub ?? null,
    });
  });
}

function home(vendor: VendorClient, req: Request, res: Response): void {
  const s = vendor.session(req, res);
  res.send(
    page(
      'Home',
      `<section><h2>Your Trading API account</h2>` +
        (s.tokens
          ? `<p id="status">Connected (scope: ${escape(s.tokens.scope)}).</p><p><a id="accounts-link" class="button" href="/accounts">See your accounts</a></p>`
          : `<p id="status">Not connected.</p><p><a id="connect" class="button" href="/connect">Connect your Trading API account</a></p>`) +
        `<p class="muted">Profile: <span id="profile">${vendor.fapi ? 'FAPI 2.0 (PAR, private_key_jwt, DPoP, OpenID Connect)' : 'plain (authorization code + PKCE, client secret)'}</span></p></section>`,
    ),
  );
}

// -------------------------------------------------------------------------------------------------
// Connecting: the authorization request, the callback, the code exchange
// -------------------------------------------------------------------------------------------------

/** Steps 1–3: verifier, challenge and state kept server-side; the browser goes to the login page. */
async function connect(vendor: VendorClient, req: Request, res: Response) {
  const config = vendor.config;
  const s = vendor.session(req, res);
  const { verifier, challenge } = pkcePair(); // RFC 7636
  const state = randomValue(); // RFC 6749 §10.12: ties the callback to this browser
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: config.clientId,
    redirect_uri: config.redirectUri,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  };
  // Without a configured language the login origin's /oauth/authorize picks it, as its own pages do.
  const url = new URL(config.locale ? `${config.loginUrl}/${config.locale}/login` : `${config.loginUrl}/oauth/authorize`);
  if (!vendor.fapi) {
    s.pending = { state, verifier };
    url.search = new URLSearchParams({ ...params, scopes: config.scopes.join(',') }).toString();
    return res.redirect(302, url.toString());
  }
  // OpenID Connect Core §3.1.2.1: a nonce the ID token must carry back.
  const nonce = randomValue();
  // RFC 9449: a key for this session; the tokens will be bound to it.
  s.dpop = await DpopKey.generate();
  s.client = undefined;
  try {
    // RFC 9126 §2: push the request, authenticated like a token request; only its handle travels in the browser.
    const e = await vendor.endpoints();
    // RFC 9449 §10: dpop_jkt binds the code to this session's key, so a stolen code is useless without it.
    const pushed = await postForm(e.par, { ...params, scope: config.scopes.join(' '), nonce, dpop_jkt: s.dpop.thumbprint }, e.auth);
    if (pushed.status !== 201)
      throw new Error(`PAR answered ${pushed.status}: ${pushed.body['error']} (${pushed.body['error_description']})`);
    s.pending = { state, verifier, nonce };
    // RFC 9126 §4: the authorization request is now client_id and request_uri only.
    url.search = new URLSearchParams({ client_id: config.clientId, request_uri: pushed.body['request_uri'] }).toString();
    res.redirect(302, url.toString());
  } catch (err) {
    res
      .status(502)
      .send(page('Error', `<section><p id="error">${escape((err as Error).message)}</p><p><a href="/">Back</a></p></section>`));
  }
}

/** Steps 4–6: the state must be the one stored (CSRF), then the code is exchanged from this backend. */
async function callback(vendor: VendorClient, req: Request, res: Response) {
  const s = vendor.session(req, res);
  const pending = s.pending;
  s.pending = undefined; // one callback per authorization request
  const q = (name: string) => (typeof req.query[name] === 'string' ? req.query[name] : '');
  const state = q('state');
  const same = pending && state.length === pending.state.length && timingSafeEqual(Buffer.from(state), Buffer.from(pending.state));
  const fail = (status: number, title: string, html: string) =>
    void res.status(status).send(page(title, `<section>${html}<p><a href="/">Back</a></p></section>`));
  if (!same) return fail(400, 'Error', '<p id="error">The state does not match this browser\'s request: refusing the callback.</p>');
  // RFC 9207: the answer names its issuer; a FAPI client accepts only the one it pushed the request to.
  if (vendor.fapi && q('iss') !== (await vendor.serverMetadata()).issuer)
    return fail(400, 'Error', '<p id="error">The callback does not come from the expected authorization server (iss).</p>');
  if (q('error'))
    return fail(
      403,
      'Not connected',
      `<p id="error">Access was not granted: <code>${escape(q('error'))}</code> ${escape(q('error_description'))}</p>`,
    );
  try {
    await exchangeCode(vendor, s, pending!, q('code'));
  } catch (err) {
    return fail(502, 'Error', `<p id="error">${escape((err as Error).message)}</p>`);
  }
  res.redirect(303, '/accounts');
}

/** The code for tokens; fapi2 also verifies the ID token (its signature, audience and the request's nonce). */
async function exchangeCode(vendor: VendorClient, s: VisitorSession, pending: NonNullable<VisitorSession['pending']>, code: string) {
  const { idToken, ...tokens } = await vendor.token(s, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: vendor.config.redirectUri,
    code_verifier: pending.verifier,
  });
  if (vendor.fapi) {
    if (!idToken) throw new Error('no ID token in the token response (was openid granted?)');
    const claims = await verifyIdToken(idToken, await vendor.serverMetadata(), vendor.config.clientId, pending.nonce!);
    s.user = { sub: claims.sub!, name: claims.name, email: claims.email };
  }
  s.tokens = tokens;
}

// -------------------------------------------------------------------------------------------------
// The dashboard, its live data, placing an order, disconnecting
// -------------------------------------------------------------------------------------------------

async function dashboard(vendor: VendorClient, req: Request, res: Response) {
  const s = vendor.session(req, res);
  if (!s.tokens) return void res.redirect(303, '/');
  const flash = s.flash;
  s.flash = undefined;
  try {
    const read = await readDashboard(vendor, s, req.query['account']);
    if (typeof read === 'string') return void res.status(502).send(page('Error', read));
    res.send(dashboardPage(read, s, flash));
  } catch (err) {
    s.tokens = undefined; // e.g. the user revoked the app: connect again
    res
      .status(401)
      .send(
        page(
          'Disconnected',
          `<section><p id="error">${escape((err as Error).message)}</p><p><a class="button" href="/connect">Connect again</a></p></section>`,
        ),
      );
  }
}

/** What the dashboard shows of the account asked for (`wanted`, else the first); the error's HTML when GET /accounts fails. */
async function readDashboard(vendor: VendorClient, s: VisitorSession, wanted: unknown): Promise<Dashboard | string> {
  const [me, accounts] = await Promise.all([
    !vendor.fapi && vendor.granted(s, 'read:accounts') ? vendor.api(s, (c) => c.GET('/oauth/userinfo')) : undefined,
    vendor.api(s, (c) => c.GET('/accounts')),
  ]);
  if (!accounts.data)
    return `<section><p id="error">GET /accounts answered ${accounts.response.status}: ${escape(JSON.stringify(accounts.error))}</p></section>`;
  const list = accounts.data.accounts;
  const account = list.find((a) => a.id === (typeof wanted === 'string' ? wanted : '')) ?? list[0];
  const accountId = account?.id;
  const { held, balances } = await readAccount(vendor, s, accountId);
  const { quotes, orders } = await vendor.live(s, accountId, vendor.quoted(held));
  return {
    name: vendor.fapi ? (s.user?.name ?? '') : `${me?.data?.firstName ?? ''} ${me?.data?.lastName ?? ''}`.trim(),
    accounts: list,
    accountId,
    held,
    balances,
    quotes,
    orders,
    readMarket: vendor.granted(s, 'read:market'),
    writeOrders: vendor.granted(s, 'write:orders'),
    liveIntervalMs: vendor.config.liveIntervalMs,
  };
}

/** The account's positions, and its balances where read:banking was granted. */
async function readAccount(vendor: VendorClient, s: VisitorSession, accountId: string | undefined) {
  const [positions, balances] = await Promise.all([
    accountId ? vendor.api(s, (c) => c.GET('/accounts/{accountId}/positions', { params: { path: { accountId } } })) : undefined,
    accountId && vendor.granted(s, 'read:banking')
      ? vendor.api(s, (c) => c.GET('/banking/{accountId}/balance', { params: { path: { accountId } } }))
      : undefined,
  ]);
  return { held: positions?.data?.positions ?? [], balances };
}

/** The page's live data: quotes and orders, fetched by this backend with the session's tokens. */
async function liveJson(vendor: VendorClient, req: Request, res: Response) {
  const s = vendor.session(req, res);
  if (!s.tokens) return void res.status(401).json({ error: 'not connected' });
  const accountId = typeof req.query['account'] === 'string' ? req.query['account'] : undefined;
  try {
    const positions = accountId
      ? await vendor.api(s, (c) => c.GET('/accounts/{accountId}/positions', { params: { path: { accountId } } }))
      : undefined;
    const symbols = vendor.quoted(positions?.data?.positions ?? []);
    res.setHeader('Cache-Control', 'no-store');
    res.json(await vendor.live(s, accountId, symbols));
  } catch (err) {
    res.status(502).json({ error: (err as Error).message });
  }
}

/** A bracket order: the entry (a GTC limit), a take-profit limit and a stop-loss on the other side. */
async function placeOrder(vendor: VendorClient, req: Request, res: Response) {
  const s = vendor.session(req, res);
  if (!s.tokens) return void res.redirect(303, '/');
  const f = (name: string) => (typeof req.body?.[name] === 'string' ? (req.body[name] as string).trim() : '');
  const accountId = f('accountId');
  const back = `/accounts?account=${encodeURIComponent(accountId)}`;
  const order = {
    accountId,
    symbol: f('symbol').toUpperCase(),
    side: f('side') === 'SELL' ? ('SELL' as const) : ('BUY' as const),
    type: 'LIMIT' as const,
    timeInForce: 'GTC' as const,
    quantity: f('quantity'),
    limitPrice: f('limitPrice'),
    orderClass: 'BRACKET' as const,
    takeProfit: { limitPrice: f('takeProfit') },
    stopLoss: { stopPrice: f('stopLoss') },
  };
  try {
    const placed = await vendor.api(s, (c) =>
      // The same key on every retry of this form: the API answers the first result again.
      c.POST('/oms/order', { body: order, params: { header: { 'Idempotency-Key': f('idempotencyKey') || randomValue() } } }),
    );
    if (placed.data) s.flash = { kind: 'notice', text: `Bracket order ${placed.data.id} placed: ${placed.data.status}.` };
    else {
      const problem = placed.error as { detail?: string; field?: string; code?: string } | undefined;
      s.flash = {
        kind: 'error',
        text: `The order was refused (${placed.response.status}${problem?.code ? ` ${problem.code}` : ''}): ${problem?.detail ?? ''}${problem?.field ? ` [${problem.field}]` : ''}`,
      };
    }
  } catch (err) {
    s.flash = { kind: 'error', text: (err as Error).message };
  }
  res.redirect(303, back);
}

/** RFC 7009: revoking the refresh token ends the whole grant. */
async function disconnect(vendor: VendorClient, req: Request, res: Response) {
  const s = vendor.session(req, res);
  if (s.tokens) {
    const e = await vendor.endpoints().catch(() => undefined);
    if (e) await postForm(e.revoke, { token: s.tokens.refreshToken, token_type_hint: 'refresh_token' }, e.auth).catch(() => undefined);
    s.tokens = undefined;
    s.user = undefined;
  }
  res.redirect(303, '/');
}
