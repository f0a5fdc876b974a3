/**
 * The vendor backend's side of OAuth and the API, per visitor session: the session cookie, the
 * token requests (code exchange, refresh), and the API client that sends the access token (and,
 * in the fapi2 profile, a DPoP proof) with every call. The routes (./*-routes.ts) use it.
 */
import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import createClient, { type Client } from 'openapi-fetch';
import type { paths, Schemas } from '@trading/api-client';
import { asksForNonce, discover, postForm, type ClientAuth, type ClientKey, type DpopKey, type ServerMetadata } from './oauth';

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
  /** This app's own base URL as the platform reaches it, e.g. http://localhost:3000: webhooks go to `${publicUrl}/webhooks`. */
  publicUrl?: string;
  /** Register `${publicUrl}/webhooks` at start (plain profile). */
  webhooks?: boolean;
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
export interface VisitorSession {
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
  /** Each symbol's bid and ask as GET /market/quotes last answered this session. */
  quotesSeen: Map<string, QuoteSeen>;
  /** The quote this session last saw for an order's symbol when it placed the order, by order id (the latest 100). */
  placedAgainst: Map<string, QuoteSeen>;
}

/** A bid and an ask, as the quotes endpoint gave them. */
export interface QuoteSeen {
  bid: string;
  ask: string;
}

/** An order as the live table shows it. */
export interface OrderRow {
  id: string;
  label: string;
  quantity: string;
  /** What the order asked for: its limit and stop prices, or "market". */
  price: string;
  /** The account the order is in, and whether it is still working (NEW or PARTIALLY_FILLED): the sandbox may fill it. */
  accountId: string;
  working: boolean;
  /** `bid / ask` last seen for the symbol when this session placed the order; "—" for orders placed elsewhere. */
  quoteWhenPlaced: string;
  /** The API's averageFillPrice; "—" until something fills. */
  filledAt: string;
  status: string;
}

const COOKIE = 'vendor_session';
const base64url = (bytes: Buffer) => bytes.toString('base64url');

function orderRow(o: Schemas['Order'], placedAgainst: QuoteSeen | undefined): OrderRow {
  const view = o as Schemas['Order'] & { orderClass?: string; leg?: string | null };
  const kind = view.leg
    ? ` ${view.leg === 'TAKE_PROFIT' ? 'take-profit' : 'stop-loss'}`
    : view.orderClass && view.orderClass !== 'SIMPLE'
      ? ` ${view.orderClass}`
      : '';
  // What the order asked for; what it got is averageFillPrice (a market order asks for no price).
  const price = [o.limitPrice && `limit ${o.limitPrice}`, o.stopPrice && `stop ${o.stopPrice}`].filter(Boolean).join(' / ');
  return {
    id: o.id,
    label: `${o.side} ${o.symbol} ${o.type}${kind}`,
    quantity: `${o.filledQuantity}/${o.quantity}`,
    accountId: o.accountId,
    working: o.status === 'NEW' || o.status === 'PARTIALLY_FILLED',
    price: price || (o.type === 'MARKET' ? 'market' : '—'),
    quoteWhenPlaced: placedAgainst ? `${placedAgainst.bid} / ${placedAgainst.ask}` : '—',
    filledAt: o.averageFillPrice ?? '—',
    status: o.status,
  };
}

export class VendorClient {
  readonly profile: SampleVendorProfile;
  readonly fapi: boolean;
  private readonly sessions = new Map<string, VisitorSession>();
  // fapi2 reads the server's endpoints, issuer and JWKS location from its metadata, once.
  private metadata: Promise<ServerMetadata> | undefined;

  constructor(readonly config: SampleVendorConfig) {
    this.profile = config.profile ?? 'plain';
    this.fapi = this.profile === 'fapi2';
    if (this.fapi && !config.clientKey) throw new Error('the fapi2 profile needs the client key (SAMPLE_VENDOR_KEY_FILE)');
    if (!this.fapi && !config.clientSecret) throw new Error('the plain profile needs the client secret');
  }

  /** The visitor's session, by its cookie; a new one (and its cookie) for a new visitor. */
  session(req: Request, res: Response): VisitorSession {
    const id = /(?:^|;\s*)vendor_session=([A-Za-z0-9_-]{43})/.exec(req.get('cookie') ?? '')?.[1];
    if (id && this.sessions.has(id)) return this.sessions.get(id)!;
    const fresh = base64url(randomBytes(32));
    const created: VisitorSession = { refreshes: 0, quotesSeen: new Map(), placedAgainst: new Map() };
    this.sessions.set(fresh, created);
    res.append('Set-Cookie', `${COOKIE}=${fresh}; Path=/; HttpOnly; SameSite=Lax`);
    return created;
  }

  serverMetadata(): Promise<ServerMetadata> {
    return (this.metadata ??= discover(this.config.loginUrl).catch((err) => ((this.metadata = undefined), Promise.reject(err))));
  }

  /** The token, PAR and revocation endpoints, and how the app proves who it is there. */
  async endpoints(): Promise<{ token: string; par: string; revoke: string; auth: ClientAuth }> {
    const config = this.config;
    if (!this.fapi)
      return {
        token: `${config.apiUrl}/oauth/token`,
        par: `${config.apiUrl}/oauth/par`,
        revoke: `${config.apiUrl}/oauth/revoke`,
        auth: { method: 'client_secret_post', clientId: config.clientId, clientSecret: config.clientSecret! },
      };
    const m = await this.serverMetadata();
    return {
      token: m.token_endpoint,
      par: m.pushed_authorization_request_endpoint,
      revoke: m.revocation_endpoint,
      // RFC 7523 §3: the assertion's audience is the authorization server, named by its issuer.
      auth: { method: 'private_key_jwt', clientId: config.clientId, key: config.clientKey!, audience: m.issuer },
    };
  }

  /** POST {token_endpoint}: form-encoded (RFC 6749 §4.1.3, §6), with a DPoP proof when the session has a key. */
  async token(s: VisitorSession, grant: Record<string, string>): Promise<Tokens & { idToken?: string }> {
    const e = await this.endpoints();
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
  private refresh(s: VisitorSession, stale: Tokens): Promise<void> {
    if (s.tokens !== stale) return Promise.resolve(); // someone refreshed already
    s.refreshing ??= this.token(s, { grant_type: 'refresh_token', refresh_token: stale.refreshToken })
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
  private apiClient(s: VisitorSession): ApiClient {
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
      baseUrl: this.config.apiUrl,
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
  async api<T extends { response: globalThis.Response }>(s: VisitorSession, request: (client: ApiClient) => Promise<T>): Promise<T> {
    if (s.refreshing) await s.refreshing;
    if (s.tokens!.expiresAt - 30_000 <= Date.now()) await this.refresh(s, s.tokens!);
    const used = s.tokens!;
    let answer = await request(this.apiClient(s));
    if (answer.response.status === 401) {
      await this.refresh(s, used);
      answer = await request(this.apiClient(s));
    }
    if (answer.response.status === 401) throw new Error('The Trading API no longer accepts this connection');
    return answer;
  }

  granted(s: VisitorSession, scope: string): boolean {
    return s.tokens!.scope.split(' ').includes(scope);
  }

  /** The live part of the dashboard: quotes for the positions (and the watchlist), the latest orders. */
  async live(s: VisitorSession, accountId: string | undefined, symbols: string[]) {
    const [quotes, orders] = await Promise.all([
      this.quotes(s, symbols),
      accountId && this.granted(s, 'read:orders')
        ? this.api(s, (c) => c.GET('/oms/{accountId}/orders', { params: { path: { accountId }, query: { limit: 10 } } }))
        : undefined,
    ]);
    return { quotes, orders: orders?.data?.orders.map((o) => orderRow(o, s.placedAgainst.get(o.id))) };
  }

  /** GET /market/quotes for these symbols (with read:market), each answer kept as the session's latest for its symbol. */
  async quotes(s: VisitorSession, symbols: string[]): Promise<Array<Schemas['MarketQuote']> | undefined> {
    if (!this.granted(s, 'read:market') || !symbols.length) return undefined;
    const answer = await this.api(s, (c) => c.GET('/market/quotes', { params: { query: { symbols: symbols.join(',') } } }));
    for (const q of answer.data?.quotes ?? []) s.quotesSeen.set(q.symbol, { bid: q.bid, ask: q.ask });
    return answer.data?.quotes;
  }

  /** The quote last seen for `symbol`; asked for now when this session has seen none (a symbol the page does not quote). */
  async quoteSeen(s: VisitorSession, symbol: string): Promise<QuoteSeen | undefined> {
    if (!s.quotesSeen.has(symbol)) await this.quotes(s, [symbol]).catch(() => undefined);
    return s.quotesSeen.get(symbol);
  }

  /** Remembers the quote an order was placed against, for the orders table; the oldest goes past 100. */
  placed(s: VisitorSession, orderId: string, quote: QuoteSeen | undefined): void {
    if (!quote) return;
    s.placedAgainst.set(orderId, quote);
    if (s.placedAgainst.size > 100) s.placedAgainst.delete(s.placedAgainst.keys().next().value!);
  }

  /** The symbols the dashboard quotes: the positions' own, then the watchlist's, twenty at most. */
  quoted(held: Array<{ symbol: string }>): string[] {
    return [...new Set([...held.map((p) => p.symbol), ...(this.config.watchlist ?? [])])].slice(0, 20);
  }
}

type Request_ = globalThis.Request;
