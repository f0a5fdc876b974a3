import { randomBytes, randomUUID } from 'node:crypto';
import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import { widenPolicy } from '@trading/service';
import { requestContext } from '../security-log/security-log';
import { authMethods, browserOf, type BrowserSession } from '../web/browser-sessions';
import { verifyCsrf } from '../web/csrf';
import { knownLocale } from '../web/locale';
import { safeLogoUrl } from '../web/signin.page';
import { texts } from '../web/texts';
import { SIGN_IN_AGAIN } from '../web/signin.routes';
import { responseUrl, type AuthorizationRequest } from './authorize';
import { ACR_MFA } from './id-token';
import { badRequestPage, consentPage } from './consent.page';
import type { OAuthContext } from './context';
import type { GrantRecord } from './grants';
import { resolveAuthorizationRequest } from './par';
import type { GrantScope } from './scopes';
import { codeKey, newCode, type CodeRecord } from './token-store';

/** An authorization request the user is looking at, kept server-side between the page and the answer. */
interface PendingConsent {
  userId: string;
  clientId: string;
  redirectUri: string;
  scope: GrantScope[];
  state?: string;
  codeChallenge: string;
  /** OpenID Connect: the request's nonce, and when the user signed in (epoch seconds), for the id_token. */
  nonce?: string;
  authTime?: number;
  /** How the user signed in (`amr`), for the id_token and userinfo. */
  amr?: string[];
  /** RFC 9449 §10: the DPoP key the code is bound to. */
  dpopJkt?: string;
}
const CONSENT_TTL_SECONDS = 600;
const pendingKey = (id: string) => `oauth-consent:${id}`;
const origin = (url: string) => new URL(url).origin;

/** The login page's own parameter: the id of the fresh sign-in it asked for. */
const SIGN_IN_ASKED = 'signin';
const signInAskedKey = (id: string) => `oauth-signin-asked:${id}`;

/**
 * Whether the user must sign in (again) before this request is answered: not signed in; or
 * prompt=login (select_account: choosing the account is signing in with it); or a sign-in older
 * than max_age. A sign-in made after this page asked for one (`askedAt`) is fresh for it.
 */
function signInNeeded(request: AuthorizationRequest, signedInAt: number | undefined, askedAt: number | undefined): boolean {
  if (signedInAt === undefined) return true;
  if (askedAt !== undefined && signedInAt >= askedAt) return false;
  if (request.prompt?.includes('login') || request.prompt?.includes('select_account')) return true;
  return request.maxAge !== undefined && Date.now() - signedInAt > request.maxAge * 1000;
}

/**
 * To the sign-in page, coming back here. A request that needs a fresh sign-in comes back with the
 * id of a record (sealed, single use) of when the sign-in was asked: only a sign-in after that
 * moment answers it, so neither a reload nor an edited URL turns an old sign-in into a fresh one.
 */
async function askSignIn(ctx: OAuthContext, here: string, locale: string, request: AuthorizationRequest, res: Response): Promise<void> {
  const fresh = !!request.prompt?.some((p) => p === 'login' || p === 'select_account') || request.maxAge !== undefined;
  let next = here;
  if (fresh) {
    const id = randomBytes(24).toString('base64url');
    await ctx.store.set(signInAskedKey(id), String(Date.now()), CONSENT_TTL_SECONDS);
    const url = new URL(here, 'http://this.site');
    url.searchParams.set(SIGN_IN_ASKED, id);
    next = `${url.pathname}${url.search}`;
  }
  res.redirect(303, `/${locale}/signin?next=${encodeURIComponent(next)}${fresh ? `&${SIGN_IN_AGAIN}=1` : ''}`);
}

/** When the sign-in `id` was asked for (epoch ms), once: the record is spent by reading it. */
async function takeSignInAsked(ctx: OAuthContext, id: string): Promise<number | undefined> {
  const raw = await ctx.store.get(signInAskedKey(id));
  if (!raw || (await ctx.store.del(signInAskedKey(id))) !== 1) return undefined;
  return Number(raw);
}

/**
 * {login_url}/<locale>/login, where the app sends the user's browser: check the request, have the user sign in (the
 * dashboard's sign-in page, which comes back here), then ask for consent. The answer is a
 * form post; approve redirects to the app with a code and state, deny with access_denied.
 */
export function loginRoutes(ctx: OAuthContext, secondFactor: SecondFactorCheck): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '8kb' });
  router.get('/:locale/login', knownLocale, loginPage(ctx, secondFactor));
  router.post('/:locale/login/consent', knownLocale, form, consentAnswer(ctx));
  return router;
}

/** Whether a user has a second factor, and where a signed-in browser gives one (coming back to `next`). */
export interface SecondFactorCheck {
  enrolled(userId: string): Promise<boolean>;
  confirmPath(locale: string, next: string): string;
}

/** acr_values asked for a second factor (the mfa class) that the browser's session has not given. */
const mfaMissing = (request: AuthorizationRequest, browser: ReturnType<typeof browserOf>) =>
  !!request.acrValues?.includes(ACR_MFA) && !(browser && authMethods(browser.session).includes('otp'));

/**
 * Where a request whose acr_values ask for a second factor the session has not given goes: a user
 * with one gives a code first (and comes back here); for a user with none, the app hears that this
 * sign-in cannot meet it (OIDC Core §3.1.2.6, unmet_authentication_requirements). Else nowhere.
 */
async function mfaDetour(
  ctx: OAuthContext,
  secondFactor: SecondFactorCheck,
  request: AuthorizationRequest,
  browser: NonNullable<ReturnType<typeof browserOf>>,
  page: { locale: string; here: string },
): Promise<string | undefined> {
  if (!mfaMissing(request, browser)) return undefined;
  if (await secondFactor.enrolled(browser.session.userId)) return secondFactor.confirmPath(page.locale, page.here);
  const description = 'The user has no second factor, which acr_values asked for';
  return responseUrl(
    request.redirectUri,
    { error: 'unmet_authentication_requirements', error_description: description, state: request.state },
    ctx.settings.issuer,
  );
}

/** What the consent page's answer needs of the request and the sign-in, kept server-side meanwhile. */
function pendingConsent(request: AuthorizationRequest, session: BrowserSession): PendingConsent {
  return {
    userId: session.userId,
    clientId: request.client.clientId,
    redirectUri: request.redirectUri,
    scope: request.scope,
    state: request.state,
    codeChallenge: request.codeChallenge,
    nonce: request.nonce,
    authTime: Math.floor(session.createdAt / 1000),
    amr: authMethods(session),
    ...(request.dpopJkt ? { dpopJkt: request.dpopJkt } : {}),
  };
}

/** The login page: the request checked, then a sign-in if one is needed, then the consent page (or, for prompt=none, an answer at once). */
function loginPage(ctx: OAuthContext, secondFactor: SecondFactorCheck): RequestHandler {
  return async (req, res) => {
    const locale = req.params['locale'] as string;
    if (req.originalUrl.length > 4000)
      return void res.status(414).send(badRequestPage(locale, { technical: texts(locale).errors.tooLong }));
    const query = req.query as Record<string, unknown>;
    const browser = browserOf(res);
    // A sign-in this page asked for (prompt=login, max_age): when it was asked, read once.
    const asked = query[SIGN_IN_ASKED];
    const askedAt = browser && typeof asked === 'string' && asked.length <= 64 ? await takeSignInAsked(ctx, asked) : undefined;
    const needsSignIn = (request: AuthorizationRequest) => signInNeeded(request, browser?.session.createdAt, askedAt);
    // A plain request, or a pushed one (request_uri, RFC 9126), spent here once it is answered:
    // by the consent page (signed in, freshly enough), or at once (prompt=none).
    const checked = await resolveAuthorizationRequest(
      ctx,
      query,
      (r) => (!needsSignIn(r) && !mfaMissing(r, browser)) || !!r.prompt?.includes('none'),
    );
    if (!checked.ok) {
      if ('page' in checked) return void res.status(400).send(badRequestPage(locale, { technical: checked.page }, req.originalUrl));
      return void res.redirect(303, checked.redirect);
    }
    const { request } = checked;
    // OpenID Connect prompt=none: no page at all. Not signed in (or not freshly enough): login_required;
    // otherwise consent_required, as every authorization here is consented to on its own page.
    if (request.prompt?.includes('none')) {
      const [error, description] = needsSignIn(request)
        ? ['login_required', 'The user must sign in (prompt=none asked for no page)']
        : ['consent_required', 'The user must consent on the consent page (prompt=none asked for no page)'];
      return void res.redirect(
        303,
        responseUrl(request.redirectUri, { error, error_description: description, state: request.state }, ctx.settings.issuer),
      );
    }
    if (!browser || needsSignIn(request)) return void (await askSignIn(ctx, req.originalUrl, locale, request, res));
    const detour = await mfaDetour(ctx, secondFactor, request, browser, { locale, here: req.originalUrl });
    if (detour) return void res.redirect(303, detour);
    const requestId = randomBytes(24).toString('base64url');
    const pending = pendingConsent(request, browser.session);
    await ctx.store.set(pendingKey(requestId), JSON.stringify(pending), CONSENT_TTL_SECONDS);
    const logo = safeLogoUrl(request.client.app.logoUrl);
    widenPolicy(res, { 'img-src': logo ? [origin(logo)] : [], 'form-action': [origin(request.redirectUri)] });
    res.send(
      consentPage({
        locale,
        app: request.client.app,
        scope: request.scope,
        requestId,
        user: { email: browser.session.email, csrf: browser.session.csrf },
        here: req.originalUrl,
      }),
    );
  };
}

/** The consent form's answer: approve redirects to the app with a code and state, deny with access_denied. */
function consentAnswer(ctx: OAuthContext): RequestHandler {
  return async (req: Request, res: Response, next) => {
    const locale = req.params['locale'] as string;
    const expired = () => res.status(400).send(badRequestPage(locale, { message: texts(locale).consentExpired }));
    if (!browserOf(res)) return void expired();
    verifyCsrf(req, res, (err?: unknown) => (err ? next(err) : void answer().catch(next)));

    async function answer() {
      const body = req.body as Record<string, unknown>;
      const id = typeof body['request'] === 'string' && body['request'].length <= 64 ? body['request'] : '';
      const raw = id ? await ctx.store.get(pendingKey(id)) : null;
      // Deleting is what claims it: a double submit gets one answer only.
      if (!raw || (await ctx.store.del(pendingKey(id))) !== 1) return void expired();
      const pending = JSON.parse(raw) as PendingConsent;
      const browser = browserOf(res)!;
      if (pending.userId !== browser.session.userId) return void expired();
      // The app may have been suspended, or a redirect URI removed, while the page was open.
      const client = await ctx.registry.findClient(pending.clientId, ctx.settings.environment);
      if (!client || !client.redirectUris.includes(pending.redirectUri))
        return void res.status(400).send(badRequestPage(locale, { message: texts(locale).errors.appGone }));

      if (body['decision'] !== 'approve') {
        return void res.redirect(
          303,
          responseUrl(
            pending.redirectUri,
            { error: 'access_denied', error_description: 'The user denied access', state: pending.state },
            ctx.settings.issuer,
          ),
        );
      }
      const grant: GrantRecord = {
        id: randomUUID(),
        userId: pending.userId,
        appId: client.app.id,
        clientId: client.clientId,
        scope: pending.scope,
      };
      await ctx.grants.recordConsent(grant);
      await ctx.securityLog.recordAfter({
        userId: grant.userId,
        type: 'app_connected',
        context: requestContext(req),
        app: { clientId: client.clientId, name: client.app.appName },
        detail: { scope: grant.scope.join(' ') },
      });
      const code = newCode();
      const record: CodeRecord = {
        grant,
        redirectUri: pending.redirectUri,
        codeChallenge: pending.codeChallenge,
        ...(pending.nonce ? { nonce: pending.nonce } : {}),
        ...(pending.authTime ? { authTime: pending.authTime } : {}),
        ...(pending.amr ? { amr: pending.amr } : {}),
        ...(pending.dpopJkt ? { dpopJkt: pending.dpopJkt } : {}),
        expiresAt: Date.now() + ctx.settings.codeTtlSeconds * 1000,
      };
      await ctx.store.set(codeKey(code), JSON.stringify(record), ctx.settings.codeTtlSeconds);
      res.redirect(303, responseUrl(pending.redirectUri, { code, state: pending.state }, ctx.settings.issuer));
    }
  };
}
