import { createHash, randomBytes } from 'node:crypto';
import { createAuthApp, type AuthApp, type AuthDeps } from '@trading/auth-service';
import { withDatabaseName } from '@trading/db';
import { createLogger, type Logger } from '@trading/logging';
import type { KeyValueStore } from '@trading/redis';
import { listen, type RunningServer } from '@trading/service';
import { CookieBrowser, http, scrapeMetrics, tickedAccounts, TEST_POSTGRES_URL } from '@trading/testing';
import type { TestPlatform } from './test-platform';

/** A valid vendor registration (every required field of the e-mailed form); tests change what they need. */
export function registration(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    companyName: 'E2E Vendor Ltd',
    companyWebsite: 'https://vendor.example',
    businessEmail: `vendor-${randomBytes(4).toString('hex')}@vendor.example`,
    country: 'GB',
    appName: 'E2E Portfolio App',
    logoUrl: 'https://vendor.example/logo.png',
    homepageUrl: 'https://vendor.example/',
    supportEmail: 'support@vendor.example',
    privacyPolicyUrl: 'https://vendor.example/privacy',
    termsOfServiceUrl: 'https://vendor.example/terms',
    redirectUris: ['https://vendor.example/callback'],
    scopes: ['read:accounts', 'read:banking'],
    ...overrides,
  };
}

export interface ProvisionedApp {
  appId: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

/** The admin API, as `npm run admin` calls it. */
export function admin(p: TestPlatform, method: 'GET' | 'POST', path: string, body?: unknown) {
  return http(method, `${p.urls.adminApi}/admin${path}`, { body, token: p.adminToken });
}

export async function provisionApp(
  p: TestPlatform,
  overrides: Record<string, unknown> = {},
  approvedScopes?: string[],
): Promise<ProvisionedApp> {
  const doc = registration(overrides);
  const res = await admin(p, 'POST', '/apps', { registration: doc, ...(approvedScopes ? { approvedScopes } : {}) });
  if (res.status !== 201) throw new Error(`provisioning answered ${res.status}: ${JSON.stringify(res.body)}`);
  return {
    appId: res.body.appId,
    clientId: res.body.clientId,
    clientSecret: res.body.clientSecret,
    redirectUri: (doc['redirectUris'] as string[])[0]!,
  };
}

/** RFC 7636: a verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A browser without JavaScript: a cookie jar for the auth app's pages, redirects followed by hand. */
export class UserAgent extends CookieBrowser {
  /** Opens the login page; signs in on the way when asked to. Returns the page it lands on. */
  async open(path: string, user?: { email: string; password: string }) {
    let res = await this.request('GET', path);
    if (res.status === 303 && res.location?.includes('/signin?next=') && user) {
      const signin = await this.request('GET', res.location);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(signin.body)![1]!;
      const next = /name="next" value="([^"]+)"/.exec(signin.body)![1]!.replace(/&amp;/g, '&');
      const posted = await this.request('POST', new URL(res.location, this.loginUrl).pathname, {
        _csrf: csrf,
        email: user.email,
        password: user.password,
        next,
      });
      if (posted.status !== 303) throw new Error(`sign-in answered ${posted.status}`);
      res = await this.request('GET', posted.location!);
    }
    return res;
  }

  /**
   * Answers the consent page on screen. Its accounts stay as the page ticks them (all), as a
   * browser leaves them, unless `accounts` names the ones to tick.
   */
  async answer(page: { body: string }, decision: 'approve' | 'deny', locale = 'en', accounts?: string[]) {
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
    const request = /name="request" value="([^"]+)"/.exec(page.body)?.[1];
    if (!csrf || !request) throw new Error(`not a consent page: ${page.body.slice(0, 300)}`);
    const ticked = accounts ?? tickedAccounts(page.body);
    return this.request('POST', `/${locale}/login/consent`, { _csrf: csrf, request, decision, accounts: ticked });
  }
}

export interface AuthorizeParams {
  clientId: string;
  redirectUri: string;
  scopes?: string;
  state?: string;
  challenge?: string;
  method?: string;
  extra?: Record<string, string>;
}

export const loginPath = (a: AuthorizeParams, locale = 'en') => {
  const q = new URLSearchParams({ response_type: 'code', client_id: a.clientId, redirect_uri: a.redirectUri });
  if (a.scopes !== undefined) q.set('scopes', a.scopes);
  if (a.state !== undefined) q.set('state', a.state);
  if (a.challenge !== undefined) q.set('code_challenge', a.challenge);
  if (a.method !== undefined) q.set('code_challenge_method', a.method);
  for (const [k, v] of Object.entries(a.extra ?? {})) q.set(k, v);
  return `/${locale}/login?${q}`;
};

/** Signs in, consents, and returns the code with what it is bound to. */
export async function authorizationCode(
  p: TestPlatform,
  app: ProvisionedApp,
  user: { email: string; password: string },
  scopes = 'read:accounts',
  ua = new UserAgent(p.urls.login),
) {
  const { verifier, challenge } = pkce();
  const state = randomBytes(12).toString('base64url');
  const page = await ua.open(
    loginPath({ clientId: app.clientId, redirectUri: app.redirectUri, scopes, state, challenge, method: 'S256' }),
    user,
  );
  const answer = await ua.answer(page, 'approve');
  const back = new URL(answer.location!);
  if (back.searchParams.get('state') !== state) throw new Error(`state came back as ${back.searchParams.get('state')}`);
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code: ${back}`);
  return { code, verifier, state, redirectUri: app.redirectUri, ua };
}

/** POST {base_url}/oauth/token as JSON (the documented body) or as RFC 6749 has it (form, optionally HTTP Basic). */
export function tokenRequest(url: string, params: Record<string, string>, options: { form?: boolean; basic?: [string, string] } = {}) {
  const headers: Record<string, string> = {};
  if (options.basic)
    headers['authorization'] =
      `Basic ${Buffer.from(`${encodeURIComponent(options.basic[0])}:${encodeURIComponent(options.basic[1])}`).toString('base64')}`;
  if (options.form) headers['content-type'] = 'application/x-www-form-urlencoded';
  return http('POST', url, { body: options.form ? new URLSearchParams(params).toString() : params, headers });
}

export async function exchange(p: TestPlatform, app: ProvisionedApp, c: { code: string; verifier: string; redirectUri: string }) {
  return tokenRequest(`${p.urls.api}/oauth/token`, {
    grant_type: 'AUTH_CODE',
    code: c.code,
    redirect_uri: c.redirectUri,
    client_id: app.clientId,
    client_secret: app.clientSecret,
    code_verifier: c.verifier,
  });
}

export const refresh = (api: string, app: ProvisionedApp, refreshToken: string, extra: Record<string, string> = {}) =>
  tokenRequest(`${api}/oauth/token`, {
    grant_type: 'REFRESH_TOKEN',
    refresh_token: refreshToken,
    client_id: app.clientId,
    client_secret: app.clientSecret,
    ...extra,
  });

/** Tokens for `user` and `app`, the whole way. */
export async function tokensFor(p: TestPlatform, app: ProvisionedApp, user: { email: string; password: string }, scopes = 'read:accounts') {
  const res = await exchange(p, app, await authorizationCode(p, app, user, scopes));
  if (res.status !== 200) throw new Error(`token exchange answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as { access_token: string; refresh_token: string; expires_in: number; token_type: string; scope: string };
}

/**
 * Another auth deployment on the platform's auth database and Redis, with its own settings:
 * another environment (APP_ENV) or short lifetimes; `deps` such as the certificates its jwks_uri
 * fetches trust.
 */
export async function extraAuth(
  p: TestPlatform,
  settings: Record<string, unknown>,
  store: KeyValueStore = p.store,
  logger: Logger = createLogger('auth', 'silent'),
  deps: Omit<AuthDeps, 'logger' | 'store'> = {},
): Promise<{ app: AuthApp; server: RunningServer; url: string; internalUrl: string; close(): Promise<void> }> {
  const app = await createAuthApp(
    {
      LOG_LEVEL: 'silent',
      REDIS_URL: p.config.REDIS_URL,
      REDIS_CLUSTER_NODES: p.config.REDIS_CLUSTER_NODES,
      ...p.identityOf('auth'),
      AUTH_PORT: 0,
      AUTH_DATABASE_URL: withDatabaseName(TEST_POSTGRES_URL, `${p.config.PLATFORM_DB_PREFIX}auth`),
      AUTH_ISSUER: `http://localhost:${p.config.AUTH_PORT}`,
      AUTH_ADMIN_TOKEN: p.adminToken,
      // The consent page lists the user's accounts, asked of the platform's accounts service.
      ACCOUNTS_INTERNAL_URL: p.internalUrls.accounts,
      // The platform's settlement stream, in the same consumer group as the platform's auth: another instance of it.
      EVENTS_STREAM: p.events.stream,
      AUTH_KEY_ENCRYPTION_KEY: p.config.AUTH_KEY_ENCRYPTION_KEY,
      PAT_SESSION_TTL_SECONDS: 900,
      AUTH_TRUST_PROXY: [],
      MAIL_POLL_MS: 0,
      // The platform's address budget, in its counters.
      OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE: p.config.OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE,
      API_RATE_LIMIT_NAMESPACE: `${p.config.PLATFORM_DB_PREFIX}api`,
      ...settings,
    },
    { ...deps, logger, store },
  );
  const server = await listen(app.app, 0, '127.0.0.1');
  const internal = await listen(app.internal, 0, '127.0.0.1');
  return {
    app,
    server,
    url: server.url,
    internalUrl: internal.url,
    close: async () => {
      await Promise.all([server.close(), internal.close()]);
      await app.close();
    },
  };
}

/** Auth's 429s so far by budget, from its internal /metrics (`rate_limit_refusals_total{limit}`). */
export async function refusalCounts(authInternalUrl: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const line of await scrapeMetrics(`${authInternalUrl}/metrics`)) {
    const limit = /^rate_limit_refusals_total\{[^}]*limit="([^"]+)"/.exec(line)?.[1];
    if (limit) counts[limit] = Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return counts;
}
