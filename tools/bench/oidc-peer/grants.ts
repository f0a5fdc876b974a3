/**
 * Grants at the oidc-provider peer through the real authorization-code flow over HTTP, as a
 * browser and a vendor backend make them: GET /auth (PKCE S256, offline_access, prompt=consent)
 * → the login and consent interactions → the redirect URI with a code → POST /token
 * (client_secret_basic, the code verifier). Each grant a browser of its own (a new session).
 */
import { createHash, randomBytes } from 'node:crypto';
import { CookieBrowser } from '@trading/testing';

export interface PeerClient {
  /** The peer's issuer, e.g. http://127.0.0.1:4000 */
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

export const basicAuth = (clientId: string, clientSecret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;

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
  const browser = new CookieBrowser(client.issuer);
  let at = await browser.request('GET', `/auth?${query}`);
  // /auth → /interaction/<uid> (login) → /auth/<uid> → /interaction/<uid> (consent) → /auth/<uid> → the redirect URI.
  for (let hops = 0; hops < 10 && at.location && !at.location.startsWith(client.redirectUri); hops++)
    at = await browser.request('GET', new URL(at.location, client.issuer).href);
  const page = at.body.replace(/<[^>]+>|\s+/g, ' ').slice(0, 300);
  if (!at.location?.startsWith(client.redirectUri)) throw new Error(`oidc-provider's flow ended at ${at.status}: ${page}`);
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
