import type { Scope } from '@trading/auth';
import { html } from '../web/html';
import { messages } from '../web/i18n';
import { layout } from '../web/layout';
import type { VendorApp } from '../registry/registry.service';

export interface ConsentView {
  locale: string;
  app: VendorApp;
  scope: Scope[];
  /** The pending request's id (server-side), echoed by the form. */
  requestId: string;
  user: { email: string; csrf: string };
}

/** Spec §5.1 step 3: the app's name and logo and the requested scopes in plain words; allow or deny. */
export function consentPage(view: ConsentView): string {
  const t = messages(view.locale);
  const { app } = view;
  return layout({
    title: t.consentTitle,
    locale: view.locale,
    user: view.user,
    body: html`<section class="card narrow" id="consent">
  <p><img src="${app.logoUrl}" alt="" width="64" height="64" id="app-logo"></p>
  <h1 id="consent-heading">${t.consentWants(app.appName)}</h1>
  <p class="hint">${t.consentBy(app.companyName)} · <a href="${app.homepageUrl}" rel="noopener noreferrer" target="_blank">${new URL(app.homepageUrl).host}</a></p>
  ${app.description ? html`<p>${app.description}</p>` : ''}
  <p>${t.consentWill}</p>
  <ul id="scopes">${view.scope.map((s) => html`<li data-scope="${s}">${t.scopes[s]} <code>${s}</code></li>`)}</ul>
  <p class="hint">${t.consentSignedInAs} <strong>${view.user.email}</strong>. ${t.consentRevokeHint}</p>
  <p class="hint"><a href="${app.privacyPolicyUrl}" rel="noopener noreferrer" target="_blank">${t.privacyPolicy}</a> · <a href="${app.termsOfServiceUrl}" rel="noopener noreferrer" target="_blank">${t.terms}</a></p>
  <form method="post" action="/${view.locale}/login/consent" id="consent-form">
    <input type="hidden" name="_csrf" value="${view.user.csrf}">
    <input type="hidden" name="request" value="${view.requestId}">
    <button type="submit" name="decision" value="approve" id="allow">${t.allow}</button>
    <button type="submit" name="decision" value="deny" id="deny" class="secondary">${t.deny}</button>
  </form>
</section>`,
  });
}

/** A request that cannot be trusted enough to go back to the app. */
export function badRequestPage(locale: string, detail: string): string {
  const t = messages(locale);
  return layout({
    title: t.badLinkTitle,
    locale,
    body: html`<section class="card narrow" id="oauth-error"><h1>${t.badLinkTitle}</h1><p class="alert" role="alert" id="oauth-error-detail">${detail}</p><p>${t.badLinkHint}</p></section>`,
  });
}
