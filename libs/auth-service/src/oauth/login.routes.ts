import { randomBytes, randomUUID } from 'node:crypto';
import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import { widenPolicy } from '@trading/service';
import { requestContext } from '../security-log/security-log';
import { authMethods, browserOf, recentSecondFactor, type BrowserSession } from '../web/browser-sessions';
import { verifyCsrf } from '../web/csrf';
import { chosenAccounts, type UserAccount } from '../users/user-accounts';
import { knownLocale } from '../web/locale';
import { safeLogoUrl } from '../web/signin.page';
import { texts } from '../web/texts';
import { SIGN_IN_AGAIN } from '../web/signin.routes';
import { responseUrl, type AuthorizationRequest } from './authorize';
import { ACR_MFA } from './id-token';
import { badRequestPage, consentPage } from './consent.page';
import type { OAuthContext } from './context';
import type { Client } from '../registry/registry.service';
import type { GrantRecord } from './grants';
import { resolveAuthorizationRequest } from './par';
import { apiScopes, type GrantScope } from './scopes';
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
  /** The user's accounts the page offered: what the answer may tick, and nothing else. */
  offered: UserAccount[];
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
  router.post('/:locale/login/consent', knownLocale, form, consentAnswer(ctx, secondFactor));
  return router;
}

/** Whether a user has a second factor, and where a signed-in browser gives one (coming back to `next`). */
export interface SecondFactorCheck {
  enrolled(userId: string): Promise<boolean>;
  confirmPath(locale: string, next: string): string;
}

/** Whether the session was signed in with a second factor (a code or a passkey). */
const withSecondFactor = (session: BrowserSession) => authMethods(session).some((m) => m === 'otp' || m === 'hwk');

/**
 * A second factor is asked for, by acr_values (the mfa class) or by the app's own policy
 * (`apps promote --require-mfa`), and the browser's session has not given one.
 */
const mfaMissing = (request: AuthorizationRequest, browser: ReturnType<typeof browserOf>) =>
  (!!request.acrValues?.includes(ACR_MFA) || request.client.requireSecondFactor) && !(browser && withSecondFactor(browser.session));

/** Scopes that move money or place orders: approving an app that asks for one is a step-up action. */
const TRADING_OR_FUNDING = ['write:orders', 'write:banking'];

/**
 * Whether approving this consent needs a second factor first: the app asks to trade or move money,
 * the user has a factor, and this session has not used it in the last ten minutes.
 */
async function stepUpNeeded(secondFactor: SecondFactorCheck, scope: readonly string[], session: BrowserSession): Promise<boolean> {
  return scope.some((s) => TRADING_OR_FUNDING.includes(s)) && !recentSecondFactor(session) && (await secondFactor.enrolled(session.userId));
}

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
  // A trading or funding scope asks a user with a factor for it (used in the last ten minutes) before the consent page.
  if (await stepUpNeeded(secondFactor, request.scope, browser.session)) return secondFactor.confirmPath(page.locale, page.here);
  if (!mfaMissing(request, browser)) return undefined;
  if (await secondFactor.enrolled(browser.session.userId)) return secondFactor.confirmPath(page.locale, page.here);
  const description = request.client.requireSecondFactor
    ? 'The user has no second factor, which this app requires'
    : 'The user has no second factor, which acr_values asked for';
  return responseUrl(
    request.redirectUri,
    { error: 'unmet_authentication_requirements', error_description: description, state: request.state },
    ctx.settings.issuer,
  );
}

/** What the consent page's answer needs of the request and the sign-in, kept server-side meanwhile. */
function pendingConsent(request: AuthorizationRequest, session: BrowserSession, offered: UserAccount[]): PendingConsent {
  return {
    offered,
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
    // Accounts are offered when the app asks for any of the API (a sign-in alone reaches none).
    const offered = apiScopes(request.scope).length ? await ctx.userAccounts.choosable(browser.session.userId) : [];
    const pending = pendingConsent(request, browser.session, offered);
    await showConsent(ctx, res, { locale, app: request.client.app, pending, browser: browser.session, here: req.originalUrl });
  };
}

/**
 * The consent page for a pending request, kept server-side under a new id (`error`: the page
 * again, after an answer that ticked no account).
 */
async function showConsent(
  ctx: OAuthContext,
  res: Response,
  view: { locale: string; app: Client['app']; pending: PendingConsent; browser: BrowserSession; here?: string; error?: string },
): Promise<void> {
  const requestId = randomBytes(24).toString('base64url');
  await ctx.store.set(pendingKey(requestId), JSON.stringify(view.pending), CONSENT_TTL_SECONDS);
  const logo = safeLogoUrl(view.app.logoUrl);
  widenPolicy(res, { 'img-src': logo ? [origin(logo)] : [], 'form-action': [origin(view.pending.redirectUri)] });
  res.status(view.error ? 400 : 200).send(
    consentPage({
      locale: view.locale,
      app: view.app,
      scope: view.pending.scope,
      accounts: view.pending.offered,
      requestId,
      user: { email: view.browser.email, csrf: view.browser.csrf },
      here: view.here,
      error: view.error,
    }),
  );
}

/** The consent form's answer: approve redirects to the app with a code and state, deny with access_denied. */
function consentAnswer(ctx: OAuthContext, secondFactor: SecondFactorCheck): RequestHandler {
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
      await approve(ctx, secondFactor, { req, res, locale, pending, client, browser: browser.session });
    }
  };
}

/**
 * An approving answer: the accounts ticked (none, of some offered, shows the page again), the
 * second factor the app or its scopes ask for, then the grant, its record and the code.
 */
async function approve(
  ctx: OAuthContext,
  secondFactor: SecondFactorCheck,
  {
    req,
    res,
    locale,
    pending,
    client,
    browser,
  }: {
    req: Request;
    res: Response;
    locale: string;
    pending: PendingConsent;
    client: Client;
    browser: BrowserSession;
  },
): Promise<void> {
  // The app reaches the accounts ticked, of those the page offered; none ticked (of some offered) is asked again.
  let accountIds: string[];
  try {
    accountIds = chosenAccounts((req.body as Record<string, unknown>)['accounts'], pending.offered);
  } catch {
    accountIds = [];
  }
  if (!accountIds.length && pending.offered.length)
    return void (await showConsent(ctx, res, {
      locale,
      app: client.app,
      pending,
      browser,
      error: texts(locale).consentNoAccount,
    }));
  // The page asked for the factor first; an answer posted without it (or after the window) is refused, not trusted.
  if ((client.requireSecondFactor && !withSecondFactor(browser)) || (await stepUpNeeded(secondFactor, pending.scope, browser)))
    return void res.status(403).send(badRequestPage(locale, { message: texts(locale).secondFactor.consentStepUp }));
  const grant: GrantRecord = {
    id: randomUUID(),
    userId: pending.userId,
    appId: client.app.id,
    clientId: client.clientId,
    scope: pending.scope,
  };
  await ctx.grants.recordConsent(grant, accountIds);
  await ctx.securityLog.recordAfter({
    userId: grant.userId,
    type: 'app_connected',
    context: requestContext(req),
    app: { clientId: client.clientId, name: client.app.appName },
    detail: { scope: grant.scope.join(' '), accounts: String(accountIds.length) },
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
