/**
 * Connecting the visitor's Trading API account and letting it go: the home page, the
 * authorization request (steps 1–3), the callback and code exchange (steps 4–6), an expired
 * access token on demand (step 8), and revocation.
 */
import { timingSafeEqual } from 'node:crypto';
import type express from 'express';
import type { Request, Response } from 'express';
import { DpopKey, pkcePair, postForm, randomValue, verifyIdToken } from './oauth';
import { escape, page } from './pages';
import type { VendorClient, VisitorSession } from './vendor-client';

export function connectionRoutes(app: express.Express, vendor: VendorClient): void {
  app.get('/', (req, res) => home(vendor, req, res));
  app.get('/connect', (req, res) => connect(vendor, req, res));
  app.get('/callback', (req, res) => callback(vendor, req, res));
  // For trying step 8 without waiting an hour.
  app.post('/expire', (req, res) => {
    const s = vendor.session(req, res);
    if (s.tokens) s.tokens.expiresAt = Date.now() - 1000;
    res.redirect(303, '/accounts');
  });
  app.post('/disconnect', (req, res) => disconnect(vendor, req, res));
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
  try {
    url.search = await pushRequest(vendor, s, params, state, verifier);
    res.redirect(302, url.toString());
  } catch (err) {
    res
      .status(502)
      .send(page('Error', `<section><p id="error">${escape((err as Error).message)}</p><p><a href="/">Back</a></p></section>`));
  }
}

/**
 * fapi2's authorization request: pushed first (RFC 9126 §2), authenticated like a token request,
 * with a nonce for the ID token and this session's new DPoP key; the query the browser then
 * carries to the login page.
 */
async function pushRequest(vendor: VendorClient, s: VisitorSession, params: Record<string, string>, state: string, verifier: string) {
  const config = vendor.config;
  // OpenID Connect Core §3.1.2.1: a nonce the ID token must carry back.
  const nonce = randomValue();
  // RFC 9449: a key for this session; the tokens will be bound to it.
  s.dpop = await DpopKey.generate();
  s.client = undefined;
  // Only the request's handle travels in the browser.
  const e = await vendor.endpoints();
  // RFC 9449 §10: dpop_jkt binds the code to this session's key, so a stolen code is useless without it.
  const pushed = await postForm(e.par, { ...params, scope: config.scopes.join(' '), nonce, dpop_jkt: s.dpop.thumbprint }, e.auth);
  if (pushed.status !== 201)
    throw new Error(`PAR answered ${pushed.status}: ${pushed.body['error']} (${pushed.body['error_description']})`);
  s.pending = { state, verifier, nonce };
  // RFC 9126 §4: the authorization request is now client_id and request_uri only.
  return new URLSearchParams({ client_id: config.clientId, request_uri: pushed.body['request_uri'] }).toString();
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
