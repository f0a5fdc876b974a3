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
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import express, { type Request, type Response } from 'express';
import createClient, { type Client } from 'openapi-fetch';
import type { paths, Schemas } from '@trading/api-client';
import {
  asksForNonce,
  discover,
  DpopKey,
  pkcePair,
  postForm,
  randomValue,
  verifyIdToken,
  type ClientAuth,
  type ClientKey,
  type ServerMetadata,
} from './oauth';

type SampleVendorProfile = 'plain' | 'fapi2';

export interface SampleVendorConfig {
  /** plain (default) or fapi2: PAR, private_key_jwt, DPoP and OpenID Connect. */
  profile?: SampleVendorProfile;
  clientId: string;
  /** plain: the client secret (fapi2 signs assertions with `clientKey` instead). */
  clientSecret?: string;
  /** fapi2: the app's signing key; its public JWKS is served at /jwks.json for the operator to register. */
  clientKey?: ClientKey;
  /** Registered for the app in the environment it talks to, exactly as sent. */
  redirectUri: string;
  /** {login_url}, e.g. http://localhost:8081 */
  loginUrl: string;
  /** {base_url}, e.g. http://localhost:8080/v1 (fapi2: the public URL DPoP proofs name) */
  apiUrl: string;
  scopes: string[];
  /** The sign-in's language (en, de, fr); unset: the login page negotiates it (the person's choice, else Accept-Language). */
  locale?: string;
  /** Symbols quoted besides the positions' own. */
  watchlist?: string[];
  /** How often the page asks for live quotes and orders (ms). */
  liveIntervalMs?: number;
}

interface Tokens {
  accessToken: string;
  refreshToken: string;
  /** Bearer, or DPoP when the tokens are bound to the session's key. */
  tokenType: string;
  /** Epoch ms. */
  expiresAt: number;
  scope: string;
}

type ApiClient = Client<paths>;

/** One visitor of the vendor's site. A real app keeps this in its own session store or database. */
interface VisitorSession {
  /** Between the redirect to the login page and the callback, whose state must match. */
  pending?: { state: string; verifier: string; nonce?: string };
  tokens?: Tokens;
  /** fapi2: the key this session's tokens are bound to (RFC 9449); made at connect, never leaves this process. */
  dpop?: DpopKey;
  /** fapi2: from the verified ID token. */
  user?: { name?: string; email?: string; sub: string };
  refreshes: number;
  /** The refresh in flight: a refresh token works once, and a second use revokes the whole grant. */
  refreshing?: Promise<void>;
  /** How the last API call was authorised ("DPoP" or "Bearer"): shown on the page and at /debug/session. */
  lastAuthScheme?: string;
  client?: ApiClient;
  /** One message for the next page (post/redirect/get). */
  flash?: { kind: 'notice' | 'error'; text: string };
}

const COOKIE = 'vendor_session';
const base64url = (bytes: Buffer) => bytes.toString('base64url');

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Every page: a viewport for phones, one stylesheet file, at most one script file; nothing inline. */
const page = (title: string, body: string, options: { header?: string; script?: boolean; mainClass?: string } = {}) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<title>${escape(title)} · Sample vendor</title><link rel="stylesheet" href="/style.css">` +
  (options.script ? '<script src="/live.js" defer></script>' : '') +
  `</head><body><header><img src="/logo.svg" alt=""><h1>Sample vendor app</h1>${options.header ?? ''}</header>` +
  `<main${options.mainClass ? ` class="${options.mainClass}"` : ''}>${body}</main></body></html>`;

const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><rect width="64" height="64" rx="12" fill="#0f766e"/><path d="M14 44 L26 30 L36 38 L50 20" stroke="#fff" stroke-width="5" fill="none" stroke-linecap="round"/></svg>`;

/** The page may load its own stylesheet, script and images, and send forms to itself: nothing else. */
const CSP =
  "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const cell = (label: string, value: string, cls = '') => `<td data-label="${label}"${cls ? ` class="${cls}"` : ''}>${escape(value)}</td>`;
const signClass = (v: string) => (v.startsWith('-') ? 'num down' : Number(v) > 0 ? 'num up' : 'num');
/** Prices rounded to the cent: the demo instruments tick in 0.01. */
const cents = (n: number) => n.toFixed(2);
/** Every time the app shows, one way: `YYYY-MM-DD HH:MM:SS UTC` (public/live.js writes the same). */
const utcTime = (d: Date) => `${d.toISOString().replace('T', ' ').slice(0, 19)} UTC`;

/** An order as the live table shows it. */
function orderRow(o: Schemas['Order']): { id: string; label: string; quantity: string; price: string; status: string } {
  const view = o as Schemas['Order'] & { orderClass?: string; leg?: string | null };
  const kind = view.leg
    ? ` ${view.leg === 'TAKE_PROFIT' ? 'take-profit' : 'stop-loss'}`
    : view.orderClass && view.orderClass !== 'SIMPLE'
      ? ` ${view.orderClass}`
      : '';
  // What the order asked for, then what it got: a filled market order has only the latter.
  const price = [
    o.limitPrice && `limit ${o.limitPrice}`,
    o.stopPrice && `stop ${o.stopPrice}`,
    o.averageFillPrice && `filled at ${o.averageFillPrice}`,
  ]
    .filter(Boolean)
    .join(' / ');
  return {
    id: o.id,
    label: `${o.side} ${o.symbol} ${o.type}${kind}`,
    quantity: `${o.filledQuantity}/${o.quantity}`,
    price: price || '—',
    status: o.status,
  };
}

export function createSampleVendorApp(config: SampleVendorConfig): express.Express {
  const profile = config.profile ?? 'plain';
  const fapi = profile === 'fapi2';
  if (fapi && !config.clientKey) throw new Error('the fapi2 profile needs the client key (SAMPLE_VENDOR_KEY_FILE)');
  if (!fapi && !config.clientSecret) throw new Error('the plain profile needs the client secret');
  const sessions = new Map<string, VisitorSession>();
  const app = express();
  app.disable('x-powered-by');
  app.use(express.urlencoded({ extended: false, limit: '10kb' }));
  app.use((_req, res, next) => {
    res.setHeader('Content-Security-Policy', CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });

  function session(req: Request, res: Response): VisitorSession {
    const id = /(?:^|;\s*)vendor_session=([A-Za-z0-9_-]{43})/.exec(req.get('cookie') ?? '')?.[1];
    if (id && sessions.has(id)) return sessions.get(id)!;
    const fresh = base64url(randomBytes(32));
    const created: VisitorSession = { refreshes: 0 };
    sessions.set(fresh, created);
    res.append('Set-Cookie', `${COOKIE}=${fresh}; Path=/; HttpOnly; SameSite=Lax`);
    return created;
  }

  // fapi2 reads the server's endpoints, issuer and JWKS location from its metadata, once.
  let metadata: Promise<ServerMetadata> | undefined;
  const serverMetadata = () => (metadata ??= discover(config.loginUrl).catch((err) => ((metadata = undefined), Promise.reject(err))));

  /** The token, PAR and revocation endpoints, and how the app proves who it is there. */
  async function endpoints(): Promise<{ token: string; par: string; revoke: string; auth: ClientAuth }> {
    if (!fapi)
      return {
        token: `${config.apiUrl}/oauth/token`,
        par: `${config.apiUrl}/oauth/par`,
        revoke: `${config.apiUrl}/oauth/revoke`,
        auth: { method: 'client_secret_post', clientId: config.clientId, clientSecret: config.clientSecret! },
      };
    const m = await serverMetadata();
    return {
      token: m.token_endpoint,
      par: m.pushed_authorization_request_endpoint,
      revoke: m.revocation_endpoint,
      // RFC 7523 §3: the assertion's audience is the authorization server, named by its issuer.
      auth: { method: 'private_key_jwt', clientId: config.clientId, key: config.clientKey!, audience: m.issuer },
    };
  }

  /** POST {token_endpoint}: form-encoded (RFC 6749 §4.1.3, §6), with a DPoP proof when the session has a key. */
  async function token(s: VisitorSession, grant: Record<string, string>): Promise<Tokens & { idToken?: string }> {
    const e = await endpoints();
    const { status, body } = await postForm(e.token, grant, e.auth, s.dpop);
    if (status !== 200) throw new Error(`token endpoint answered ${status}: ${body['error']} (${body['error_description']})`);
    // RFC 9449 §5: a bound token says so; a client that asked for DPoP must not accept a Bearer token.
    if (s.dpop && body['token_type'] !== 'DPoP') throw new Error(`expected a DPoP-bound token, got token_type ${body['token_type']}`);
    return {
      accessToken: body['access_token'],
      refreshToken: body['refresh_token'],
      tokenType: body['token_type'],
      expiresAt: Date.now() + Number(body['expires_in']) * 1000,
      scope: body['scope'],
      idToken: body['id_token'],
    };
  }

  /**
   * Step 8: refresh, and keep the new refresh token (the old one is spent). Concurrent callers
   * share one refresh: presenting a spent refresh token revokes the grant (RFC 9700 reuse detection).
   * A DPoP-bound refresh token needs a proof of the same key (RFC 9449 §5.2).
   */
  function refresh(s: VisitorSession, stale: Tokens): Promise<void> {
    if (s.tokens !== stale) return Promise.resolve(); // someone refreshed already
    s.refreshing ??= token(s, { grant_type: 'refresh_token', refresh_token: stale.refreshToken })
      .then(({ idToken: _none, ...fresh }) => {
        s.tokens = fresh;
        s.refreshes++;
      })
      .finally(() => (s.refreshing = undefined));
    return s.refreshing;
  }

  /**
   * The session's API client. Every request carries the current access token: `Bearer`, or
   * `DPoP` with a fresh proof for this method and URL (RFC 9449 §7.1), sent once more with the
   * server's nonce when it answers use_dpop_nonce (§9).
   */
  function apiClient(s: VisitorSession): ApiClient {
    const send = async (request: Request_) => {
      const accessToken = s.tokens!.accessToken;
      if (s.dpop) {
        request.headers.set('authorization', `DPoP ${accessToken}`);
        request.headers.set('dpop', await s.dpop.proof(request.method, request.url, accessToken));
      } else request.headers.set('authorization', `Bearer ${accessToken}`);
      s.lastAuthScheme = s.dpop ? 'DPoP' : 'Bearer';
      return fetch(request);
    };
    return (s.client ??= createClient<paths>({
      baseUrl: config.apiUrl,
      fetch: async (request) => {
        const again = request.clone(); // a body can be sent once
        const response = await send(request);
        if (s.dpop && s.dpop.remember(request.url, response) && (await asksForNonce(response))) {
          s.dpop.nonceRetries++;
          return send(again);
        }
        return response;
      },
    }));
  }

  /** Step 7, refreshing first when the access token has expired (or is about to), and once more on a 401. */
  async function api<T extends { response: globalThis.Response }>(
    s: VisitorSession,
    request: (client: ApiClient) => Promise<T>,
  ): Promise<T> {
    if (s.refreshing) await s.refreshing;
    if (s.tokens!.expiresAt - 30_000 <= Date.now()) await refresh(s, s.tokens!);
    const used = s.tokens!;
    let answer = await request(apiClient(s));
    if (answer.response.status === 401) {
      await refresh(s, used);
      answer = await request(apiClient(s));
    }
    if (answer.response.status === 401) throw new Error('The Trading API no longer accepts this connection');
    return answer;
  }

  const granted = (s: VisitorSession, scope: string) => s.tokens!.scope.split(' ').includes(scope);

  /** The live part of the dashboard: quotes for the positions (and the watchlist), the latest orders. */
  async function live(s: VisitorSession, accountId: string | undefined, symbols: string[]) {
    const [quotes, orders] = await Promise.all([
      granted(s, 'read:market') && symbols.length
        ? api(s, (c) => c.GET('/market/quotes', { params: { query: { symbols: symbols.join(',') } } }))
        : undefined,
      accountId && granted(s, 'read:orders')
        ? api(s, (c) => c.GET('/oms/{accountId}/orders', { params: { path: { accountId }, query: { limit: 10 } } }))
        : undefined,
    ]);
    return { quotes: quotes?.data?.quotes, orders: orders?.data?.orders.map(orderRow) };
  }

  // ---------------------------------------------------------------------------------------------
  // Static files, the app's public keys, a debug view
  // ---------------------------------------------------------------------------------------------

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
    const s = session(req, res);
    res.json({
      profile,
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

  app.get('/', (req, res) => {
    const s = session(req, res);
    res.send(
      page(
        'Home',
        `<section><h2>Your Trading API account</h2>` +
          (s.tokens
            ? `<p id="status">Connected (scope: ${escape(s.tokens.scope)}).</p><p><a id="accounts-link" class="button" href="/accounts">See your accounts</a></p>`
            : `<p id="status">Not connected.</p><p><a id="connect" class="button" href="/connect">Connect your Trading API account</a></p>`) +
          `<p class="muted">Profile: <span id="profile">${fapi ? 'FAPI 2.0 (PAR, private_key_jwt, DPoP, OpenID Connect)' : 'plain (authorization code + PKCE, client secret)'}</span></p></section>`,
      ),
    );
  });

  // Steps 1–3: verifier, challenge and state kept server-side; the browser goes to the login page.
  app.get('/connect', async (req, res) => {
    const s = session(req, res);
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
    if (!fapi) {
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
      const e = await endpoints();
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
  });

  // Steps 4–6: the state must be the one stored (CSRF), then the code is exchanged from this backend.
  app.get('/callback', async (req, res) => {
    const s = session(req, res);
    const pending = s.pending;
    s.pending = undefined; // one callback per authorization request
    const q = (name: string) => (typeof req.query[name] === 'string' ? req.query[name] : '');
    const state = q('state');
    const same = pending && state.length === pending.state.length && timingSafeEqual(Buffer.from(state), Buffer.from(pending.state));
    const fail = (status: number, title: string, html: string) =>
      void res.status(status).send(page(title, `<section>${html}<p><a href="/">Back</a></p></section>`));
    if (!same) return fail(400, 'Error', '<p id="error">The state does not match this browser\'s request: refusing the callback.</p>');
    // RFC 9207: the answer names its issuer; a FAPI client accepts only the one it pushed the request to.
    if (fapi && q('iss') !== (await serverMetadata()).issuer)
      return fail(400, 'Error', '<p id="error">The callback does not come from the expected authorization server (iss).</p>');
    if (q('error'))
      return fail(
        403,
        'Not connected',
        `<p id="error">Access was not granted: <code>${escape(q('error'))}</code> ${escape(q('error_description'))}</p>`,
      );
    try {
      const { idToken, ...tokens } = await token(s, {
        grant_type: 'authorization_code',
        code: q('code'),
        redirect_uri: config.redirectUri,
        code_verifier: pending!.verifier,
      });
      if (fapi) {
        if (!idToken) throw new Error('no ID token in the token response (was openid granted?)');
        const claims = await verifyIdToken(idToken, await serverMetadata(), config.clientId, pending!.nonce!);
        s.user = { sub: claims.sub!, name: claims.name, email: claims.email };
      }
      s.tokens = tokens;
    } catch (err) {
      return fail(502, 'Error', `<p id="error">${escape((err as Error).message)}</p>`);
    }
    res.redirect(303, '/accounts');
  });

  app.get('/accounts', async (req, res) => {
    const s = session(req, res);
    if (!s.tokens) return void res.redirect(303, '/');
    const flash = s.flash;
    s.flash = undefined;
    try {
      const [me, accounts] = await Promise.all([
        !fapi && granted(s, 'read:accounts') ? api(s, (c) => c.GET('/oauth/userinfo')) : undefined,
        api(s, (c) => c.GET('/accounts')),
      ]);
      if (!accounts.data)
        return void res
          .status(502)
          .send(
            page(
              'Error',
              `<section><p id="error">GET /accounts answered ${accounts.response.status}: ${escape(JSON.stringify(accounts.error))}</p></section>`,
            ),
          );
      const list = accounts.data.accounts;
      const wanted = typeof req.query['account'] === 'string' ? req.query['account'] : '';
      const account = list.find((a) => a.id === wanted) ?? list[0];
      const accountId = account?.id;

      const [positions, balances] = await Promise.all([
        accountId ? api(s, (c) => c.GET('/accounts/{accountId}/positions', { params: { path: { accountId } } })) : undefined,
        accountId && granted(s, 'read:banking')
          ? api(s, (c) => c.GET('/banking/{accountId}/balance', { params: { path: { accountId } } }))
          : undefined,
      ]);
      const held = positions?.data?.positions ?? [];
      const symbols = [...new Set([...held.map((p) => p.symbol), ...(config.watchlist ?? [])])].slice(0, 20);
      const { quotes, orders } = await live(s, accountId, symbols);

      const name = fapi ? (s.user?.name ?? '') : `${me?.data?.firstName ?? ''} ${me?.data?.lastName ?? ''}`.trim();
      const header =
        `<p id="who">Hello ${escape(name)}</p>` +
        `<form method="post" action="/disconnect"><button id="disconnect" class="secondary" type="submit">Disconnect</button></form>`;

      const accountsHtml =
        `<section class="wide"><h2>Accounts</h2><ul id="accounts" class="accounts">` +
        list
          .map(
            (a) =>
              `<li><a href="/accounts?account=${encodeURIComponent(a.id)}"${a.id === accountId ? ' aria-current="page"' : ''}>${escape(a.number)} <small>(${escape(a.type)}, ${escape(a.baseCurrency)})</small></a></li>`,
          )
          .join('') +
        `</ul></section>`;

      const balancesHtml = balances
        ? `<section><h2>Balances</h2>` +
          (balances.data
            ? `<div class="table-scroll"><table id="balances" class="cards"><thead><tr><th>Currency</th><th class="num">Cash</th><th class="num">Available to trade</th><th class="num">Pending in</th><th class="num">Pending out</th></tr></thead><tbody>` +
              balances.data.balances
                .map((b) => {
                  const c = b as typeof b & { pendingIn?: string; pendingOut?: string };
                  return `<tr>${cell('Currency', c.currency)}${cell('Cash', c.cash, 'num')}${cell('Available to trade', c.availableToTrade, 'num')}${cell('Pending in', c.pendingIn ?? '—', 'num')}${cell('Pending out', c.pendingOut ?? '—', 'num')}</tr>`;
                })
                .join('') +
              `</tbody></table></div>`
            : `<p class="muted">Balances unavailable (${balances.response.status}).</p>`) +
          `</section>`
        : '';

      const positionsHtml =
        `<section><h2>Positions</h2>` +
        (held.length
          ? `<div class="table-scroll"><table id="positions" class="cards"><thead><tr><th>Symbol</th><th class="num">Quantity</th><th class="num">Price</th><th class="num">Value</th><th class="num">Unrealised P&amp;L</th></tr></thead><tbody>` +
            held
              .map(
                (p) =>
                  `<tr>${cell('Symbol', p.symbol)}${cell('Quantity', p.quantity, 'num')}${cell('Price', p.marketPrice, 'num')}${cell('Value', `${p.marketValue} ${p.currency}`, 'num')}${cell('Unrealised P&L', p.unrealizedPnl, signClass(p.unrealizedPnl))}</tr>`,
              )
              .join('') +
            `</tbody></table></div>`
          : `<p id="no-positions" class="muted">No positions in this account.</p>`) +
        `</section>`;

      const quotesHtml = quotes
        ? `<section><h2>Quotes</h2><div class="table-scroll"><table id="quotes" class="cards"><thead><tr><th>Symbol</th><th class="num">Bid</th><th class="num">Ask</th><th class="num">Last</th></tr></thead><tbody>` +
          quotes
            .map(
              (q) =>
                `<tr data-symbol="${escape(q.symbol)}">${cell('Symbol', q.symbol)}${cell('Bid', q.bid, 'num')}${cell('Ask', q.ask, 'num')}${cell('Last', q.lastPrice, 'num')}</tr>`,
            )
            .join('') +
          `</tbody></table></div></section>`
        : granted(s, 'read:market')
          ? ''
          : `<section><h2>Quotes</h2><p class="muted">Ask for read:market to see live quotes.</p></section>`;

      const ordersHtml = orders
        ? `<section class="wide"><h2>Orders</h2><div class="table-scroll"><table id="orders" class="cards"><thead><tr><th>Order</th><th class="num">Filled/Qty</th><th class="num">Price</th><th>Status</th></tr></thead><tbody>` +
          orders
            .map(
              (o) =>
                `<tr data-order="${escape(o.id)}">${cell('Order', o.label)}${cell('Qty', o.quantity, 'num')}${cell('Price', o.price, 'num')}${cell('Status', o.status)}</tr>`,
            )
            .join('') +
          `</tbody></table></div></section>`
        : '';

      // The bracket form: entry limit, take-profit above it, stop-loss below, prefilled from the first quote.
      const first = quotes?.[0];
      const entry = first ? Number(first.bid) : 0;
      const orderFormHtml =
        accountId && granted(s, 'write:orders')
          ? `<section class="wide"><h2>Place a bracket order</h2>` +
            `<form id="order-form" class="order" method="post" action="/orders">` +
            `<input type="hidden" name="accountId" value="${escape(accountId)}">` +
            // One key per form shown: a resubmission (double click, retry) places the order once.
            `<input type="hidden" name="idempotencyKey" value="${escape(randomValue())}">` +
            `<label>Symbol<input id="order-symbol" name="symbol" required value="${escape(first?.symbol ?? '')}" autocapitalize="characters"></label>` +
            `<label>Side<select id="order-side" name="side"><option>BUY</option><option>SELL</option></select></label>` +
            `<label>Quantity<input id="order-quantity" name="quantity" inputmode="decimal" required value="1"></label>` +
            `<label>Entry limit<input id="order-limit" name="limitPrice" inputmode="decimal" required value="${entry ? cents(entry) : ''}"></label>` +
            `<label>Take-profit<input id="order-take-profit" name="takeProfit" inputmode="decimal" required value="${entry ? cents(entry * 1.05) : ''}"></label>` +
            `<label>Stop-loss<input id="order-stop-loss" name="stopLoss" inputmode="decimal" required value="${entry ? cents(entry * 0.95) : ''}"></label>` +
            `<p class="actions"><button id="place-order" type="submit">Place bracket order</button> <small>GTC; the exits start when the entry fills and cancel each other.</small></p>` +
            `</form></section>`
          : accountId
            ? `<section class="wide"><h2>Place a bracket order</h2><p class="muted">Ask for write:orders (SAMPLE_VENDOR_SCOPES) to place orders.</p></section>`
            : '';

      const connectionHtml =
        `<section class="wide"><h2>Connection</h2>` +
        `<p>Scope: <code id="scope">${escape(s.tokens.scope)}</code>. Tokens: <strong id="token-type">${escape(s.tokens.tokenType)}</strong>` +
        (s.dpop ? ` (bound to key <code id="dpop-jkt">${escape(s.dpop.thumbprint)}</code>)` : '') +
        `; last API call authorised with <strong id="auth-scheme">${escape(s.lastAuthScheme ?? '')}</strong>.</p>` +
        (s.user ? `<p id="id-token">Signed in with OpenID Connect: verified ID token for ${escape(s.user.email ?? s.user.sub)}.</p>` : '') +
        `<p id="refreshes">Token refreshed ${s.refreshes} time(s); access token valid until ${utcTime(new Date(s.tokens.expiresAt))}.</p>` +
        `<p id="live-status" class="muted">Live updates every ${Math.round((config.liveIntervalMs ?? 2000) / 1000)} s.</p>` +
        `<div class="inline-forms"><form method="post" action="/expire"><button id="expire" class="secondary" type="submit">Pretend the access token expired</button></form></div>` +
        `</section>`;

      const flashHtml = flash
        ? `<p id="${flash.kind === 'error' ? 'order-error' : 'notice'}" class="notice wide${flash.kind === 'error' ? ' error' : ''}">${escape(flash.text)}</p>`
        : '';
      const liveUrl = `/live.json${accountId ? `?account=${encodeURIComponent(accountId)}` : ''}`;
      res.send(
        page(
          'Accounts',
          flashHtml +
            accountsHtml +
            positionsHtml +
            quotesHtml +
            balancesHtml +
            ordersHtml +
            orderFormHtml +
            connectionHtml +
            `<div hidden data-live="${escape(liveUrl)}" data-interval="${config.liveIntervalMs ?? 2000}"></div>`,
          { header, script: true, mainClass: 'dashboard' },
        ),
      );
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
  });

  // The page's live data: quotes and orders, fetched by this backend with the session's tokens.
  app.get('/live.json', async (req, res) => {
    const s = session(req, res);
    if (!s.tokens) return void res.status(401).json({ error: 'not connected' });
    const accountId = typeof req.query['account'] === 'string' ? req.query['account'] : undefined;
    try {
      const positions = accountId
        ? await api(s, (c) => c.GET('/accounts/{accountId}/positions', { params: { path: { accountId } } }))
        : undefined;
      const symbols = [...new Set([...(positions?.data?.positions ?? []).map((p) => p.symbol), ...(config.watchlist ?? [])])].slice(0, 20);
      res.setHeader('Cache-Control', 'no-store');
      res.json(await live(s, accountId, symbols));
    } catch (err) {
      res.status(502).json({ error: (err as Error).message });
    }
  });

  // A bracket order: the entry (a GTC limit), a take-profit limit and a stop-loss on the other side.
  app.post('/orders', async (req, res) => {
    const s = session(req, res);
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
      const placed = await api(s, (c) =>
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
      const e = await endpoints().catch(() => undefined);
      if (e) await postForm(e.revoke, { token: s.tokens.refreshToken, token_type_hint: 'refresh_token' }, e.auth).catch(() => undefined);
      s.tokens = undefined;
      s.user = undefined;
    }
    res.redirect(303, '/');
  });
  return app;
}

type Request_ = globalThis.Request;
