/**
 * A running platform's world, made through its front doors the way the service team and a user
 * make it (for tools that drive a deployed platform: the benchmark, the scale-out proof): a
 * user with two accounts and a PAT (auth's admin API, as `npm run admin` calls it), a PAT
 * session (POST /v1/pat/login), a vendor app and its grants (authorization code + PKCE through
 * auth's pages, as a browser without JavaScript), an instrument and cleared cash.
 */
import { createHash, randomBytes } from 'node:crypto';
import Decimal from 'decimal.js';
import { http } from './index';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface Urls {
  /** {base_url}: the facade's /v1. */
  api: string;
  /** auth's public listener: sign-in and consent pages, /oauth/token. */
  login: string;
  /** auth's admin API. */
  admin: string;
}

export interface WorldUser {
  email: string;
  password: string;
  accounts: string[];
  /** A PAT session JWT. */
  session: string;
}

export interface VendorApp {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

async function adminPost(urls: Urls, adminToken: string, path: string, body: unknown) {
  const res = await http('POST', `${urls.admin}/admin${path}`, { token: adminToken, body });
  if (res.status !== 201 && res.status !== 200) throw new Error(`POST /admin${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as Record<string, string>;
}

const daysAhead = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

/** A new user with a CASH and a MARGIN account, a READ_WRITE PAT and a session made from it. */
export async function createUser(urls: Urls, adminToken: string, label = 'bench'): Promise<WorldUser> {
  const email = `${label}-${randomBytes(5).toString('hex')}@example.com`;
  const password = `${label}-${randomBytes(12).toString('hex')}`;
  await adminPost(urls, adminToken, '/users', { email, password, firstName: 'World', lastName: 'User' });
  const accounts: string[] = [];
  for (const type of ['CASH', 'MARGIN'])
    accounts.push((await adminPost(urls, adminToken, '/accounts', { email, type, currency: 'USD' }))['accountId']!);
  const pat = await adminPost(urls, adminToken, '/pats', { email, name: 'bench', scope: 'READ_WRITE', expires: daysAhead(7) });
  const login = await http('POST', `${urls.api}/pat/login`, { body: { token: pat['token'] } });
  if (login.status !== 200) throw new Error(`POST /v1/pat/login answered ${login.status}: ${JSON.stringify(login.body)}`);
  return { email, password, accounts, session: login.body.token };
}

/** An instrument of the bench's own at `price` (the paper market moves it from there). */
export async function listInstrument(urls: Urls, adminToken: string, price: string): Promise<string> {
  const symbol = `B${randomBytes(3).toString('hex').toUpperCase()}`;
  await adminPost(urls, adminToken, '/instruments', { symbol, name: 'Bench Corp', currency: 'USD', tickSize: '0.01', price });
  return symbol;
}

/** Deposits `amount` USD into each account (sandbox: clearing completes it) and waits until the cash can trade. */
export async function fund(urls: Urls, user: WorldUser, amount: string, timeoutMs = 60_000): Promise<void> {
  for (const accountId of user.accounts) {
    const res = await http('POST', `${urls.api}/banking/deposit`, {
      token: user.session,
      headers: { 'idempotency-key': `bench-fund-${accountId}` },
      body: { accountId, amount, currency: 'USD', sandboxOutcome: 'COMPLETED' },
    });
    if (res.status !== 201) throw new Error(`POST /v1/banking/deposit answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  const deadline = Date.now() + timeoutMs;
  for (const accountId of user.accounts) {
    for (;;) {
      const res = await http('GET', `${urls.api}/banking/${accountId}/balance/USD`, { token: user.session });
      if (res.status === 200 && new Decimal(res.body.availableToTrade ?? 0).gte(amount)) break;
      if (Date.now() > deadline) throw new Error(`the deposit into ${accountId} did not clear: ${JSON.stringify(res.body)}`);
      await sleep(500);
    }
  }
}

/** The last price of `symbol`, as the facade shows it. */
export async function lastPrice(urls: Urls, user: WorldUser, symbol: string): Promise<number> {
  const res = await http('GET', `${urls.api}/oms/${user.accounts[0]}/order/rules?symbol=${symbol}`, { token: user.session });
  if (res.status !== 200) throw new Error(`GET order rules answered ${res.status}: ${JSON.stringify(res.body)}`);
  const found = JSON.stringify(res.body).match(/"lastPrice":"([\d.]+)"/);
  if (!found) throw new Error(`no lastPrice for ${symbol} in the order rules: ${JSON.stringify(res.body).slice(0, 300)}`);
  return Number(found[1]);
}

/** Registers and provisions a vendor app (DEV) through the admin API, asking for `scopes`. */
export async function provisionApp(urls: Urls, adminToken: string, scopes: string[] = ['read:accounts']): Promise<VendorApp> {
  const redirectUri = 'https://vendor.example/callback';
  const registration = {
    companyName: 'Sample Vendor Ltd',
    companyWebsite: 'https://vendor.example',
    businessEmail: `vendor-${randomBytes(4).toString('hex')}@vendor.example`,
    country: 'GB',
    appName: 'Sample App',
    logoUrl: 'https://vendor.example/logo.png',
    homepageUrl: 'https://vendor.example/',
    supportEmail: 'support@vendor.example',
    privacyPolicyUrl: 'https://vendor.example/privacy',
    termsOfServiceUrl: 'https://vendor.example/terms',
    redirectUris: [redirectUri],
    scopes,
  };
  const app = await adminPost(urls, adminToken, '/apps', { registration });
  return { clientId: app['clientId']!, clientSecret: app['clientSecret']!, redirectUri };
}

/** A browser without JavaScript for auth's pages: a cookie jar, redirects followed by hand. */
export class CookieBrowser {
  private readonly cookies = new Map<string, string>();
  /** `headers`: sent with every request, e.g. the X-Forwarded-For a trusted proxy would add. */
  constructor(
    readonly loginUrl: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  /** `url` absolute, or a path on `loginUrl`; a form field given a list is sent once per value, as ticked checkboxes are. */
  async request(method: 'GET' | 'POST', url: string, form?: Record<string, string | string[]>) {
    const res = await fetch(url.startsWith('/') ? this.loginUrl + url : url, {
      method,
      redirect: 'manual',
      headers: {
        ...this.headers,
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form
        ? new URLSearchParams(
            Object.entries(form).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((one): [string, string] => [k, one])),
          )
        : undefined,
    });
    for (const line of res.headers.getSetCookie()) {
      const [name, value] = line.split(';')[0]!.split('=') as [string, string];
      if (/Max-Age=0/.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const body = await res.text();
    return { status: res.status, headers: res.headers, body, location: res.headers.get('location') ?? undefined };
  }
}

const formField = (page: string, name: string) => {
  const value = new RegExp(`name="${name}" value="([^"]+)"`).exec(page)?.[1];
  if (!value) throw new Error(`no ${name} field on the page: ${page.slice(0, 200)}`);
  return value.replace(/&amp;/g, '&');
};

/** The accounts a consent page offers ticked: what a browser sends back when the user leaves them so. */
export const tickedAccounts = (page: string): string[] => [...page.matchAll(/name="accounts" value="([^"]+)" checked/g)].map((m) => m[1]!);

/** One grant of `user` to `app` through the whole flow (sign in, consent, code + PKCE verifier at /oauth/token): its first tokens. */
export async function grantTokens(
  urls: Urls,
  app: VendorApp,
  user: WorldUser,
  scopes = 'read:accounts',
): Promise<{ access_token: string; refresh_token: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(12).toString('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: app.clientId,
    redirect_uri: app.redirectUri,
    scopes,
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const browser = new CookieBrowser(urls.login);
  const login = await browser.request('GET', `/en/login?${query}`);
  if (login.status !== 303 || !login.location?.includes('/signin?next=')) throw new Error(`the login page answered ${login.status}`);
  const signin = await browser.request('GET', login.location);
  const signedIn = await browser.request('POST', new URL(login.location, urls.login).pathname, {
    _csrf: formField(signin.body, '_csrf'),
    email: user.email,
    password: user.password,
    next: formField(signin.body, 'next'),
  });
  if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}`);
  const consent = await browser.request('GET', signedIn.location!);
  const approved = await browser.request('POST', '/en/login/consent', {
    _csrf: formField(consent.body, '_csrf'),
    request: formField(consent.body, 'request'),
    decision: 'approve',
    accounts: tickedAccounts(consent.body),
  });
  const back = new URL(approved.location ?? 'about:blank');
  const code = back.searchParams.get('code');
  if (!code || back.searchParams.get('state') !== state) throw new Error(`consent answered ${approved.status} ${approved.location}`);
  const res = await http('POST', `${urls.login}/oauth/token`, {
    body: {
      grant_type: 'authorization_code',
      code,
      redirect_uri: app.redirectUri,
      client_id: app.clientId,
      client_secret: app.clientSecret,
      code_verifier: verifier,
    },
  });
  if (res.status !== 200) throw new Error(`the code exchange answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** `count` grants of `user` to `app`: their first refresh tokens. */
export async function refreshTokens(urls: Urls, app: VendorApp, user: WorldUser, count: number): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) tokens.push((await grantTokens(urls, app, user)).refresh_token);
  return tokens;
}
