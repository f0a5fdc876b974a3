import { html } from '../web/html';
import { errorPage } from '../web/error.page';
import { layout } from '../web/layout';
import { safeLogoUrl } from '../web/signin.page';
import { texts } from '../web/texts';
import type { VendorApp } from '../registry/registry.service';
import { accountLabel, type UserAccount } from '../users/user-accounts';
import { isOidcScope, type GrantScope } from './scopes';

export interface ConsentView {
  locale: string;
  app: VendorApp;
  scope: GrantScope[];
  /** The user's accounts, each a checkbox (ticked to begin with): the app reaches only those ticked. None: no choice shown (a sign-in alone, or no account yet). */
  accounts: UserAccount[];
  /** Why the page is shown again (an answer that ticked no account). */
  error?: string;
  /** The pending request's id (server-side), echoed by the form. */
  requestId: string;
  user: { email: string; csrf: string };
  /** This page's address, for the language switcher (the authorization request stays in it). */
  here?: string;
}

/** The consent screen shown after sign-in: the app's name and logo and the requested scopes in plain words; allow or deny. */
export function consentPage(view: ConsentView): string {
  const t = texts(view.locale);
  const { app } = view;
  const logo = safeLogoUrl(app.logoUrl);
  return layout({
    title: t.consentTitle,
    locale: view.locale,
    user: view.user,
    here: view.here,
    body: html`<section class="card narrow" id="consent">
  <p>${
    logo
      ? html`<img src="${logo}" alt="${t.signIn.logoAlt(app.appName)}" width="64" height="64" id="app-logo">`
      : html`<span class="app-badge large" aria-hidden="true" id="app-badge">${(Array.from(app.appName.trim())[0] ?? '?').toLocaleUpperCase()}</span>`
  }</p>
  <h1 id="consent-heading">${t.consentWants(app.appName)}</h1>
  <p class="hint">${t.consentBy(app.companyName)} · <a href="${app.homepageUrl}" rel="noopener noreferrer" target="_blank">${new URL(app.homepageUrl).host}</a></p>
  ${app.description ? html`<p>${app.description}</p>` : ''}
  <p>${t.consentWill}</p>
  <ul id="scopes">${view.scope.map((s) => html`<li data-scope="${s}">${isOidcScope(s) ? t.oidcScopes[s] : t.scopes[s]} <code>${s}</code></li>`)}</ul>
  <p class="hint">${t.consentSignedInAs} <strong>${view.user.email}</strong>. ${t.consentRevokeHint(t.dashboard.apps)}</p>
  <p class="hint"><a href="${app.privacyPolicyUrl}" rel="noopener noreferrer" target="_blank">${t.privacyPolicy}</a> · <a href="${app.termsOfServiceUrl}" rel="noopener noreferrer" target="_blank">${t.terms}</a></p>
  <form method="post" action="/${view.locale}/login/consent" id="consent-form">
    <input type="hidden" name="_csrf" value="${view.user.csrf}">
    <input type="hidden" name="request" value="${view.requestId}">
    ${
      view.accounts.length
        ? html`<fieldset id="consent-accounts"${view.error ? html` aria-describedby="consent-accounts-error"` : ''}>
      <legend>${t.consentAccounts}</legend>
      ${view.accounts.map(
        (a) =>
          html`<input type="checkbox" id="account-${a.accountId}" name="accounts" value="${a.accountId}" checked><label for="account-${a.accountId}">${accountLabel(a)}</label>`,
      )}
      <p class="hint">${t.consentAccountsHint(t.dashboard.apps)}</p>
      ${view.error ? html`<p class="error" id="consent-accounts-error" role="alert">${view.error}</p>` : ''}
    </fieldset>`
        : ''
    }
    <button type="submit" name="decision" value="approve" id="allow">${t.allow}</button>
    <button type="submit" name="decision" value="deny" id="deny" class="secondary">${t.deny}</button>
  </form>
</section>`,
  });
}

/**
 * A request that cannot be trusted enough to go back to the app: plain words for the person
 * (`message`, or "this sign-in link does not work"), the exact reason for the app's developer
 * folded under "Technical details".
 */
export function badRequestPage(locale: string, detail: { message?: string; technical?: string }, here?: string): string {
  const t = texts(locale);
  return errorPage({
    locale,
    title: t.badLinkTitle,
    message: detail.message ?? t.badLinkHint,
    technical: detail.technical,
    here,
  });
}
