import { html } from './html';
import { messages } from './i18n';
import { layout } from './layout';

export interface SignInView {
  locale: string;
  csrf: string;
  email?: string;
  /** Where to go after signing in (a local path; see `safeNext`). */
  next?: string;
  error?: string;
}

/**
 * The sign-in form. It is the dashboard's, and is written to be the login page of the OAuth
 * flow too (`next` carries the authorization request back after signing in).
 */
export function signInPage(view: SignInView): string {
  const t = messages(view.locale);
  return layout({
    title: t.signInTitle,
    locale: view.locale,
    body: html`<section class="card narrow">
  <h1>${t.signInTitle}</h1>
  ${view.error ? html`<p class="alert" role="alert" id="signin-error">${view.error}</p>` : ''}
  <form method="post" action="/${view.locale}/signin" data-validate novalidate>
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
</section>`,
  });
}

/** Only a path on this site, never `//evil.example` or `https://…`: no open redirect. */
export function safeNext(value: unknown): string | undefined {
  return typeof value === 'string' && /^\/(?![/\\])[\x21-\x7e]*$/.test(value) && value.length <= 2048 ? value : undefined;
}
