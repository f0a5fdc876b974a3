import { randomUUID } from 'node:crypto';
import { dashboardConfigDefaults } from '@trading/auth-service';
import { createRestFacadeApp, type FacadeConfig } from '@trading/rest-facade-service';
import { createLogger } from '@trading/logging';
import { listen } from '@trading/service';
import { http } from '@trading/testing';
import type { TestPlatform } from './test-platform';

/** The platform runs auth with the default limits. */
export const AUTH_LIMITS = dashboardConfigDefaults();

/** A user of their own for each test, so suites and tests never share state. */
export async function newUser(p: TestPlatform, password = 'a-long-enough-password') {
  const email = `pat-${randomUUID()}@example.com`;
  const user = await p.auth.users.create({ email, password, firstName: 'Pat', lastName: 'Tester' });
  return { id: user.id, email, password };
}

/** `YYYY-MM-DD` (UTC) `years` years and `days` days from today. */
export function utcDate(days: number, years = 0): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear() + years, now.getUTCMonth(), now.getUTCDate() + days)).toISOString().slice(0, 10);
}

/**
 * Another REST facade on the same gateway, auth and Redis: a second instance of the
 * deployment (revocation must reach it) or one behind a trusted load balancer. `publicUrl`: the
 * {base_url} it answers for (DPoP proofs name it): the platform's, for a second instance of it.
 * `settings`: more of its configuration, over these.
 */
export async function extraFacade(
  p: TestPlatform,
  trustProxy: string[] = [],
  publicUrl = p.urls.api,
  authInternalUrl = p.urls.authInternal,
  settings: Partial<FacadeConfig> = {},
) {
  const issuer = `http://localhost:${p.config.AUTH_PORT}`;
  const app = await createRestFacadeApp(
    {
      LOG_LEVEL: 'silent',
      REDIS_URL: p.config.REDIS_URL,
      REDIS_CLUSTER_NODES: p.config.REDIS_CLUSTER_NODES,
      ...p.identityOf('rest-facade'),
      API_RATE_LIMIT_PER_MINUTE: p.config.API_RATE_LIMIT_PER_MINUTE,
      API_ORDER_RATE_LIMIT_PER_MINUTE: p.config.API_ORDER_RATE_LIMIT_PER_MINUTE,
      API_ADDRESS_RATE_LIMIT_PER_MINUTE: p.config.API_ADDRESS_RATE_LIMIT_PER_MINUTE,
      API_APP_RATE_LIMIT_PER_MINUTE: p.config.API_APP_RATE_LIMIT_PER_MINUTE,
      API_RATE_LIMIT_NAMESPACE: `${p.config.PLATFORM_DB_PREFIX}api`,
      SESSION_CACHE_ENTRIES: 10_000, // its own Redis connection with client-side caching, as a deployed instance has
      LISTEN_HOST: '127.0.0.1',
      INTERNAL_LISTEN_HOST: '127.0.0.1',
      FACADE_PORT: 0,
      FACADE_INTERNAL_PORT: 0,
      GATEWAY_URL: p.urls.gatewayInternal,
      AUTH_INTERNAL_URL: authInternalUrl,
      AUTH_JWKS_URL: `${p.urls.login}/.well-known/jwks.json`,
      AUTH_ISSUER: issuer,
      // Another instance of the same deployment answers at the same public URL (behind one load balancer).
      FACADE_PUBLIC_URL: [publicUrl],
      FACADE_TRUST_PROXY: trustProxy,
      OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE: p.config.OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE,
      EVENTS_STREAM: p.events.stream,
      ORDER_EVENTS_HEARTBEAT_MS: 15_000,
      ORDER_EVENTS_MAX_STREAMS_PER_USER: 5,
      ORDER_EVENTS_REPLAY_MAX_ENTRIES: 20_000,
      ORDER_EVENTS_REPLAYS_PER_MINUTE: 30,
      CORS_ORIGINS_CACHE_MS: 30_000,
      MARKET_TICKS_STREAM: `${p.config.PLATFORM_DB_PREFIX}market:ticks`,
      MARKET_EVENTS_HEARTBEAT_MS: 15_000,
      MARKET_EVENTS_MAX_STREAMS_PER_USER: 5,
      EVENT_STREAM_LEASE_MS: 15_000,
      ...settings,
    },
    { logger: createLogger('rest-facade', 'silent'), events: p.events.log },
  );
  const server = await listen(app.app, 0, '127.0.0.1');
  const internal = await listen(app.internal, 0, '127.0.0.1');
  return {
    api: `${server.url}/v1`,
    metrics: `${internal.url}/metrics`,
    close: async () => {
      await server.close();
      await internal.close();
      await app.close();
    },
  };
}

/**
 * The dashboard over plain HTTP, as a browser without JavaScript would use it: a cookie jar,
 * the CSRF token read from each page's forms.
 */
export class DashboardClient {
  private readonly cookies = new Map<string, string>();
  csrf = '';
  constructor(
    readonly base: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  /** A form field given a list is sent once per value, as ticked checkboxes are. */
  async request(method: 'GET' | 'POST', path: string, form?: Record<string, string | string[]>) {
    const res = await fetch(this.base + path, {
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
      const [pair] = line.split(';');
      const [name, value] = pair!.split('=') as [string, string];
      if (/Max-Age=0/.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const body = await res.text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(body)?.[1];
    if (csrf) this.csrf = csrf;
    return { status: res.status, headers: res.headers, body, setCookies: res.headers.getSetCookie() };
  }

  async signIn(email: string, password: string) {
    await this.request('GET', '/en/signin');
    const res = await this.request('POST', '/en/signin', { _csrf: this.csrf, email, password });
    // Signed in, forms carry the session's own token: pick it up from the dashboard.
    if (res.status === 303) await this.request('GET', '/en/developer');
    return res;
  }

  /**
   * Submits the create-token form; `token` is set when the page shows a new token. A created one
   * is answered 303 to the dashboard (post/redirect/get), which is followed: `body` is that page.
   */
  async createToken(fields: { name?: string; expires?: string; scope?: string; ips?: string; accounts?: string[] }) {
    const posted = await this.request('POST', '/en/developer/tokens', {
      _csrf: this.csrf,
      name: 'token',
      scope: 'READ_ONLY',
      ips: '',
      expires: utcDate(30),
      ...fields,
    });
    const res = posted.status === 303 ? { ...(await this.request('GET', posted.headers.get('location')!)), status: 303 } : posted;
    const token = /id="new-token" type="text" readonly value="([^"]+)"/.exec(res.body)?.[1];
    const errors = Object.fromEntries([...res.body.matchAll(/id="error-(\w+)">([^<]+)</g)].map((m) => [m[1], m[2]]));
    return { ...res, token, errors };
  }

  revoke(tokenId: string) {
    return this.request('POST', `/en/developer/tokens/${tokenId}/revoke`, { _csrf: this.csrf });
  }
}

/** POST /pat/login; returns the whole answer. */
export const patLogin = (api: string, token: string, headers: Record<string, string> = {}) =>
  http('POST', `${api}/pat/login`, { body: { token }, headers });

export async function sessionToken(api: string, token: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await patLogin(api, token, headers);
  if (res.status !== 200) throw new Error(`PAT login answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.token as string;
}
