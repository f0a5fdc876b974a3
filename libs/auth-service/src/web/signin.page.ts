import { passkeyButton } from '../second-factor/second-factor.pages';
import { html } from './html';
import { layout } from './layout';
import { texts } from './texts';

/** The app an OAuth sign-in continues to, as the registry knows it. */
export interface SigningInApp {
  name: string;
  /** The registering company (the publisher). */
  company: string;
  /** Shown only when safe (see `safeLogoUrl`); otherwise the app's initial in a badge. */
  logoUrl?: string;
}

export interface SignInView {
  locale: string;
  csrf: string;
  email?: string;
  /** Where to go after signing in (a path on this site; see `returnPath`). */
  next?: string;
  error?: string;
  /** On the OAuth path: the app the person is signing in for. The dashboard's own sign-in names none. */
  app?: SigningInApp;
  /** A server-chosen notice (e.g. after a password reset). */
  notice?: string;
}

/** https only, or plain http on the developer's own machine; never data:, javascript: or credentials. */
export function safeLogoUrl(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
    if (url.username || url.password) return undefined;
    return url.protocol === 'https:' || (url.protocol === 'http:' && loopback) ? url.toString() : undefined;
  } catch {
    return undefined;
  }
}

/** The validation sentences of the page's script, in the page's language. */
const signInScriptMessages = (locale: string) => {
  const t = texts(locale).signIn;
  return JSON.stringify({ email: t.emailInvalid, password: t.passwordMissing });
};

const initial = (name: string) => (Array.from(name.trim())[0] ?? '?').toLocaleUpperCase();

/**
 * The sign-in form. It is the dashboard's, and the login page of the OAuth flow too (`next`
 * carries the authorization request back after signing in): then it names the app, its logo
 * and publisher, so the person knows what they are signing in for.
 */
export function signInPage(view: SignInView): string {
  const t = texts(view.locale);
  const query = view.next ? `?next=${encodeURIComponent(view.next)}` : '';
  const logo = safeLogoUrl(view.app?.logoUrl);
  return layout({
    title: view.app ? t.signIn.toApp(view.app.name) : t.signInTitle,
    locale: view.locale,
    here: `/${view.locale}/signin${query}`,
    body: html`<section class="card narrow" id="signin">
  ${
    view.app
      ? html`<div class="app-id" id="signin-app">
    ${
      logo
        ? html`<img src="${logo}" alt="${t.signIn.logoAlt(view.app.name)}" width="48" height="48" class="app-logo" id="signin-app-logo">`
        : html`<span class="app-badge" aria-hidden="true" id="signin-app-badge">${initial(view.app.name)}</span>`
    }
    <div><h1 id="signin-heading">${t.signIn.toApp(view.app.name)}</h1><p class="hint" id="signin-publisher">${t.signIn.appBy(view.app.company)}</p></div>
  </div>`
      : html`<h1 id="signin-heading">${t.signInTitle}</h1><p class="hint">${t.signIn.lead}</p>`
  }
  ${view.notice ? html`<p class="notice" role="status" id="notice">${view.notice}</p>` : ''}
  ${view.error ? html`<p class="alert" role="alert" id="signin-error">${view.error}</p>` : ''}
  <form method="post" action="/${view.locale}/signin" data-validate data-messages="${signInScriptMessages(view.locale)}" novalidate>
    <input type="hidden" name="_csrf" value="${view.csrf}">
    ${view.next ? html`<input type="hidden" name="next" value="${view.next}">` : ''}
    <label for="email">${t.email}</label>
    <input id="email" name="email" type="email" autocomplete="username" required maxlength="320" value="${view.email ?? ''}">
    <p class="error" data-error-for="email"></p>
    <label for="password">${t.password}</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="200">
    <p class="error" data-error-for="password"></p>
    <button type="submit">${t.signInButton}</button>
  </form>
  ${passkeyButton({ locale: view.locale, csrf: view.csrf, id: 'signin-passkey', path: `/${view.locale}/signin/passkey`, next: view.next, label: t.passkey.signInWith })}
  <p class="aside"><a href="/${view.locale}/forgot-password${query}" id="forgot-password">${t.signIn.forgot}</a></p>
</section>`,
  });
}
