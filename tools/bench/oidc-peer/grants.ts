/**
 * Grants at the oidc-provider peer through the real authorization-code flow over HTTP, as a
 * browser and a vendor backend make them: GET /auth (PKCE S256, offline_access, prompt=consent)
 * → the login and consent interactions → the redirect URI with a code → POST /token
 * (client_secret_basic, the code verifier). Each grant a browser of its own (a new session).
 */
import { createHash, randomBytes } from 'node:crypto';

export interface PeerClient {
  /** The peer's issuer, e.g. http://127.0.0.1:4000 */
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

export const basicAuth = (clientId: string, clientSecret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;

/** A cookie jar that follows redirects by hand. */
class Browser {
  private readonly cookies = new Map<string, string>();
  async get(url: string): Promise<{ status: number; location?: string; body: string }> {
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const [name, value] = [pair!.slice(0, at), pair!.slice(at + 1)];
      if (!value || /max-age=0|expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const location = res.headers.get('location');
    return { status: res.status, body: await res.text(), ...(location ? { location: new URL(location, url).href } : {}) };
  }
}

/** One grant through the whole flow: its first refresh token. */
async function peerGrant(client: PeerClient): Promise<string> {
  const [verifier, state] = [randomBytes(32).toString('base64url'), randomBytes(12).toString('base64url')];
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    scope: 'read:accounts offline_access',
    prompt: 'consent',
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const browser = new Browser();
  let at = await browser.get(`${client.issuer}/auth?${query}`);
  // /auth → /interaction/<uid> (login) → /auth/<uid> → /interaction/<uid> (consent) → /auth/<uid> → the redirect URI.
  for (let hops = 0; hops < 10 && at.location && !at.location.startsWith(client.redirectUri); hops++) at = await browser.get(at.location);
  if (!at.location?.startsWith(client.redirectUri)) {
    const text = at.body
      .replace(/<style>[^]*<\/style>/, '')
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ');
    throw new Error(`oidc-provider's flow ended at ${at.status}: ${text.slice(0, 300)}`);
  }
  const back = new URL(at.location);
  const code = back.searchParams.get('code');
  if (!code || back.searchParams.get('state') !== state) throw new Error(`oidc-provider redirected without a code: ${at.location}`);
  const res = await fetch(`${client.issuer}/token`, {
    method: 'POST',
    headers: { authorization: basicAuth(client.clientId, client.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: verifier }),
  });
  const body = (await res.json()) as { refresh_token?: string };
  if (res.status !== 200 || !body.refresh_token)
    throw new Error(`oidc-provider's code exchange answered ${res.status}: ${JSON.stringify(body)}`);
  return body.refresh_token;
}

/** `count` grants, one after another: their first refresh tokens. */
export async function peerRefreshTokens(client: PeerClient, count: number): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) tokens.push(await peerGrant(client));
  return tokens;
}
