import { html } from '../web/html';
import { layout } from '../web/layout';
import { texts } from '../web/texts';
import { PASSWORD_RULES } from '../users/users.service';

export interface ForgotView {
  locale: string;
  csrf: string;
  email?: string;
  /** An OAuth request in flight, carried back to the sign-in page. */
  next?: string;
  error?: string;
}

const signInLink = (locale: string, next?: string) => `/${locale}/signin${next ? `?next=${encodeURIComponent(next)}` : ''}`;

/** "Forgot password?": the e-mail address, nothing else. */
export function forgotPage(view: ForgotView): string {
  const t = texts(view.locale);
  const query = view.next ? `?next=${encodeURIComponent(view.next)}` : '';
  return layout({
    title: t.reset.forgotTitle,
    locale: view.locale,
    here: `/${view.locale}/forgot-password${query}`,
    body: html`<section class="card narrow" id="forgot">
  <h1>${t.reset.forgotTitle}</h1>
  <p>${t.reset.forgotIntro}</p>
  ${view.error ? html`<p class="alert" role="alert" id="forgot-error">${view.error}</p>` : ''}
  <form method="post" action="/${view.locale}/forgot-password" data-validate data-messages="${JSON.stringify({ email: t.signIn.emailInvalid })}" novalidate id="forgot-form">
    <input type="hidden" name="_csrf" value="${view.csrf}">
    ${view.next ? html`<input type="hidden" name="next" value="${view.next}">` : ''}
    <label for="email">${t.email}</label>
    <input id="email" name="email" type="email" autocomplete="username" required maxlength="320" value="${view.email ?? ''}">
    <p class="error" data-error-for="email"></p>
    <button type="submit">${t.reset.send}</button>
  </form>
  <p class="aside"><a href="${signInLink(view.locale, view.next)}">${t.reset.back}</a></p>
</section>`,
  });
}

/** The same answer for every address, existing or not. */
export function sentPage(view: { locale: string; email: string; minutes: number; next?: string }): string {
  const t = texts(view.locale).reset;
  return layout({
    title: t.sentTitle,
    locale: view.locale,
    here: `/${view.locale}/forgot-password`,
    body: html`<section class="card narrow" id="reset-sent">
  <h1>${t.sentTitle}</h1>
  <p class="notice" role="status" id="notice">${t.sent(view.email, view.minutes)}</p>
  <p class="aside"><a href="${signInLink(view.locale, view.next)}">${t.back}</a></p>
</section>`,
  });
}

export interface ResetView {
  locale: string;
  csrf: string;
  token: string;
  /** "Sign out everywhere and revoke all tokens": ticked unless the person unticked it. */
  signOutEverywhere?: boolean;
  errors?: { newPassword?: string; confirmPassword?: string };
}

/** The new password, twice, under the same rule as everywhere else. */
export function resetPage(view: ResetView): string {
  const t = texts(view.locale).reset;
  const e = view.errors ?? {};
  const scriptMessages = JSON.stringify({ 'newPassword.short': t.tooShort(PASSWORD_RULES.min), 'confirmPassword.differ': t.differ });
  return layout({
    title: t.title,
    locale: view.locale,
    // The switcher reloads this form in another language: the link's token stays on this site (no-referrer everywhere).
    here: `/${view.locale}/reset-password?token=${view.token}`,
    body: html`<section class="card narrow" id="reset">
  <h1>${t.title}</h1>
  <form method="post" action="/${view.locale}/reset-password" data-validate data-messages="${scriptMessages}" novalidate id="reset-form">
    <input type="hidden" name="_csrf" value="${view.csrf}">
    <input type="hidden" name="token" value="${view.token}">
    <label for="new-password">${t.newPassword}</label>
    <input id="new-password" name="newPassword" type="password" autocomplete="new-password" required minlength="${PASSWORD_RULES.min}" maxlength="${PASSWORD_RULES.max}" aria-describedby="password-hint">
    <p class="hint" id="password-hint">${t.hint(PASSWORD_RULES.min)}</p>
    <p class="error" data-error-for="newPassword" id="error-newPassword">${e.newPassword ?? ''}</p>
    <label for="confirm-password">${t.confirm}</label>
    <input id="confirm-password" name="confirmPassword" type="password" autocomplete="new-password" required maxlength="${PASSWORD_RULES.max}">
    <p class="error" data-error-for="confirmPassword" id="error-confirmPassword">${e.confirmPassword ?? ''}</p>
    <fieldset>
      <input type="checkbox" id="sign-out-everywhere" name="signOutEverywhere" value="yes" aria-describedby="sign-out-everywhere-hint" ${view.signOutEverywhere === false ? '' : 'checked'}><label for="sign-out-everywhere">${t.signOutEverywhere}</label>
    </fieldset>
    <p class="hint" id="sign-out-everywhere-hint">${t.signOutEverywhereHint}</p>
    <button type="submit">${t.save}</button>
  </form>
  <p class="hint">${t.afterNote}</p>
</section>`,
  });
}

/** A spent, expired or made-up link: say so, and offer a new one. */
export function linkInvalidPage(locale: string): string {
  const t = texts(locale).reset;
  return layout({
    title: t.linkInvalidTitle,
    locale,
    here: `/${locale}/forgot-password`,
    body: html`<section class="card narrow" id="reset-invalid">
  <h1>${t.linkInvalidTitle}</h1>
  <p class="alert" role="alert">${t.linkInvalid}</p>
  <p><a href="/${locale}/forgot-password" id="ask-again">${t.askAgain}</a></p>
</section>`,
  });
}
