import { isoMinute } from '../web/dates';
import { html, SafeHtml } from '../web/html';
import { layout } from '../web/layout';
import { texts } from '../web/texts';
import type { SecondFactor } from './second-factor.store';

type User = { email: string; csrf: string };

/**
 * The dashboard's "Security" section: the authenticator app, if any, with its removal (else the
 * button that sets one up); then the passkeys, each renamed or removed in place, and the form that adds one.
 */
export function securitySection(view: { locale: string; csrf: string; factors: SecondFactor[]; recoveryLeft: number }): SafeHtml {
  const t = texts(view.locale).secondFactor;
  const apps = view.factors.filter((f) => f.kind === 'totp');
  return html`<section class="card" id="security">
  <h2>${t.security}</h2>
  <p class="hint">${t.securityHint}</p>
  ${
    apps.length
      ? html`<table id="second-factors" class="stack">
    <thead><tr><th>${t.factorName}</th><th>${t.added}</th><th></th></tr></thead>
    <tbody>
    ${apps.map(
      (f) => html`<tr data-factor-id="${f.id}">
      <td data-label="${t.factorName}">${f.name}</td><td data-label="${t.added}">${isoMinute(f.createdAt)}</td>
      <td><form method="post" action="/${view.locale}/developer/security/totp/${f.id}/remove" id="remove-factor">
        <input type="hidden" name="_csrf" value="${view.csrf}">
        <label for="remove-code">${t.removeCode}</label>
        <input id="remove-code" name="code" type="text" inputmode="text" autocomplete="one-time-code" required maxlength="20" spellcheck="false">
        <button type="submit" class="danger">${t.remove}</button></form></td>
    </tr>`,
    )}
    </tbody>
  </table>
  <p id="recovery-left">${t.recoveryLeft(view.recoveryLeft)}</p>`
      : html`<p id="no-second-factor">${t.none}</p>
  <form method="post" action="/${view.locale}/developer/security/totp" id="setup-totp">
    <input type="hidden" name="_csrf" value="${view.csrf}">
    <button type="submit">${t.setUp}</button>
  </form>`
  }
  ${passkeysPart(
    view.locale,
    view.csrf,
    view.factors.filter((f) => f.kind === 'passkey'),
  )}
</section>`;
}

/** What the page's script says when the browser's passkey dialog ends without one, in the page's language. */
const passkeyScriptMessages = (locale: string) => {
  const t = texts(locale).passkey;
  return JSON.stringify({ cancelled: t.cancelled, unsupported: t.unsupported, failed: t.refused });
};

/**
 * The attributes the page's script reads to run a passkey ceremony: where it gets the options,
 * where it sends the authenticator's answer, and where it says what went wrong.
 */
const ceremony = (locale: string, kind: 'register' | 'authenticate', options: string, verify: string, error: string) =>
  html`data-passkey="${kind}" data-options="${options}" data-verify="${verify}" data-error="${error}" data-messages="${passkeyScriptMessages(locale)}"`;

function passkeysPart(locale: string, csrf: string, passkeys: SecondFactor[]): SafeHtml {
  const t = texts(locale).passkey;
  const base = `/${locale}/developer/security/passkeys`;
  return html`<h3 id="passkeys-heading">${t.title}</h3>
  <p class="hint">${t.hint}</p>
  ${
    passkeys.length
      ? html`<table id="passkeys" class="stack">
    <thead><tr><th>${t.name}</th><th>${t.added}</th><th>${t.lastUsed}</th><th></th></tr></thead>
    <tbody>
    ${passkeys.map(
      (k) => html`<tr data-passkey-id="${k.id}">
      <td data-label="${t.name}"><form method="post" action="${base}/${k.id}/rename" class="rename-passkey">
        <input type="hidden" name="_csrf" value="${csrf}">
        <label for="passkey-name-${k.id}" class="passkey-name-label">${t.name}</label>
        <input id="passkey-name-${k.id}" name="name" type="text" value="${k.name}" required maxlength="100" spellcheck="false">
        <button type="submit">${t.rename}</button></form></td>
      <td data-label="${t.added}">${isoMinute(k.createdAt)}</td>
      <td data-label="${t.lastUsed}">${k.lastUsedAt ? isoMinute(k.lastUsedAt) : t.never}</td>
      <td><form method="post" action="${base}/${k.id}/remove" class="remove-passkey" data-confirm="${t.removeConfirm}">
        <input type="hidden" name="_csrf" value="${csrf}">
        <button type="submit" class="danger">${t.remove}</button></form></td>
    </tr>`,
    )}
    </tbody>
  </table>`
      : html`<p id="no-passkey">${t.none}</p>`
  }
  <p class="alert" role="alert" id="passkey-error" hidden></p>
  <form method="post" action="${base}" id="add-passkey" ${ceremony(locale, 'register', `${base}/options`, base, 'passkey-error')}>
    <input type="hidden" name="_csrf" value="${csrf}">
    <label for="new-passkey-name">${t.newName}</label>
    <input id="new-passkey-name" name="name" type="text" value="${t.defaultName}" required maxlength="100" spellcheck="false">
    <button type="submit">${t.add}</button>
  </form>`;
}

/** A passkey's new name refused (empty or too long): the field again, with why. */
export function passkeyNamePage(view: { locale: string; user: User; passkeyId: string; error: string }): string {
  const t = texts(view.locale).passkey;
  return layout({
    title: t.title,
    locale: view.locale,
    user: view.user,
    here: `/${view.locale}/developer`,
    body: html`<section class="card narrow" id="security">
  <h1>${t.title}</h1>
  <p class="alert" role="alert" id="rename-error">${view.error}</p>
  <form method="post" action="/${view.locale}/developer/security/passkeys/${view.passkeyId}/rename" class="rename-passkey">
    <input type="hidden" name="_csrf" value="${view.user.csrf}">
    <label for="passkey-name">${t.name}</label>
    <input id="passkey-name" name="name" type="text" required maxlength="100" spellcheck="false">
    <button type="submit">${t.rename}</button>
  </form>
  <p class="aside"><a href="/${view.locale}/developer#security">${texts(view.locale).secondFactor.cancel}</a></p>
</section>`,
  });
}

/** The button that signs in (or confirms) with a passkey, run by the page's script; `next` goes along. */
export function passkeyButton(view: {
  locale: string;
  csrf: string;
  id: string;
  path: string;
  next?: string;
  label: string;
  /** The page's main action (no other way offered), rather than an alternative to a form above. */
  primary?: boolean;
}): SafeHtml {
  const errorId = `${view.id}-error`;
  return html`<p class="alert" role="alert" id="${errorId}" hidden></p>
  <form method="post" action="${view.path}" id="${view.id}" ${ceremony(view.locale, 'authenticate', `${view.path}/options`, view.path, errorId)}>
    <input type="hidden" name="_csrf" value="${view.csrf}">
    ${view.next ? html`<input type="hidden" name="next" value="${view.next}">` : ''}
    <button type="submit"${view.primary ? '' : html` class="secondary"`}>${view.label}</button>
  </form>`;
}

/** The new secret as a QR code (inline SVG: no image request) and as text, and the form for its first code. */
export function setupPage(view: { locale: string; user: User; secret: string; qrSvg: string; error?: string }): string {
  const t = texts(view.locale).secondFactor;
  // Grouped in fours for reading and typing; apps ignore the spaces.
  const grouped = view.secret.replace(/(.{4})(?=.)/g, '$1 ');
  return layout({
    title: t.setupTitle,
    locale: view.locale,
    user: view.user,
    here: `/${view.locale}/developer/security/totp`,
    body: html`<section class="card narrow" id="totp-setup">
  <h1>${t.setupTitle}</h1>
  <p>${t.scan}</p>
  <div class="qr" id="totp-qr" role="img" aria-label="${t.qrAlt}">${new SafeHtml(view.qrSvg)}</div>
  <p>${t.orEnter}</p>
  <p><code id="totp-secret" data-secret="${view.secret}">${grouped}</code></p>
  ${view.error ? html`<p class="alert" role="alert" id="totp-error">${view.error}</p>` : ''}
  <form method="post" action="/${view.locale}/developer/security/totp/confirm" id="confirm-totp">
    <input type="hidden" name="_csrf" value="${view.user.csrf}">
    <label for="code">${t.firstCode}</label>
    <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="\\d{6}" required maxlength="6" spellcheck="false">
    <button type="submit">${t.confirm}</button>
  </form>
  <p class="aside"><a href="/${view.locale}/developer" id="cancel-setup">${t.cancel}</a></p>
</section>`,
  });
}

/** Shown once, as the answer to the confirming form: the recovery codes. */
export function recoveryCodesPage(view: { locale: string; user: User; codes: string[] }): string {
  const t = texts(view.locale).secondFactor;
  return layout({
    title: t.codesTitle,
    locale: view.locale,
    user: view.user,
    here: `/${view.locale}/developer`,
    body: html`<section class="card narrow token-once" id="recovery-codes-panel">
  <h1>${t.codesTitle}</h1>
  <p>${t.codesLead}</p>
  <p><strong>${t.codesOnce}</strong></p>
  <ol id="recovery-codes">${view.codes.map((c) => html`<li><code>${c}</code></li>`)}</ol>
  <p><a href="/${view.locale}/developer#security" id="codes-done">${t.done}</a></p>
</section>`,
  });
}

/** The dashboard's removal refused (a wrong code): the same field again, with why. */
export function removeRefusedPage(view: { locale: string; user: User; factorId: string; error: string }): string {
  const t = texts(view.locale).secondFactor;
  return layout({
    title: t.security,
    locale: view.locale,
    user: view.user,
    here: `/${view.locale}/developer`,
    body: html`<section class="card narrow" id="security">
  <h1>${t.security}</h1>
  <p class="alert" role="alert" id="remove-error">${view.error}</p>
  <form method="post" action="/${view.locale}/developer/security/totp/${view.factorId}/remove" id="remove-factor">
    <input type="hidden" name="_csrf" value="${view.user.csrf}">
    <label for="remove-code">${t.removeCode}</label>
    <input id="remove-code" name="code" type="text" autocomplete="one-time-code" required maxlength="20" spellcheck="false">
    <button type="submit" class="danger">${t.remove}</button>
  </form>
  <p class="aside"><a href="/${view.locale}/developer">${t.cancel}</a></p>
</section>`,
  });
}

/** A code to confirm an action that needs a recent second factor (creating a READ_WRITE token). */
export function stepUpPage(view: { locale: string; user: User; next?: string; error?: string }): string {
  const t = texts(view.locale).secondFactor;
  return layout({
    title: t.stepUpTitle,
    locale: view.locale,
    user: view.user,
    here: `/${view.locale}/developer`,
    body: html`<section class="card narrow" id="step-up">
  <h1>${t.stepUpTitle}</h1>
  <p class="hint">${t.stepUpLead}</p>
  ${view.error ? html`<p class="alert" role="alert" id="step-up-error">${view.error}</p>` : ''}
  ${stepUpForm(view.locale, view.user.csrf, view.next)}
  <p class="aside"><a href="/${view.locale}/developer">${t.cancel}</a></p>
</section>`,
  });
}

/** The form that gives a code to confirm with: on the page above, and above the dashboard's token form when it needs one. */
export function stepUpForm(locale: string, csrf: string, next?: string): SafeHtml {
  const t = texts(locale).secondFactor;
  return html`<form method="post" action="/${locale}/developer/security/confirm" id="step-up-form">
    <input type="hidden" name="_csrf" value="${csrf}">
    ${next ? html`<input type="hidden" name="next" value="${next}">` : ''}
    <label for="step-up-code">${t.code}</label>
    <input id="step-up-code" name="code" type="text" autocomplete="one-time-code" required maxlength="20" spellcheck="false">
    <button type="submit">${t.verify}</button>
  </form>
  ${passkeyButton({ locale, csrf, id: 'step-up-passkey', path: `/${locale}/developer/security/confirm/passkey`, next, label: texts(locale).passkey.useInstead })}`;
}

/** Sign-in's second step: the code from the app, or a recovery code; or one of the user's passkeys. */
export function secondStepPage(view: { locale: string; csrf: string; error?: string; passkey?: boolean; code?: boolean }): string {
  const t = texts(view.locale).secondFactor;
  const code = view.code ?? true;
  return layout({
    title: t.stepTitle,
    locale: view.locale,
    here: `/${view.locale}/signin/second-factor`,
    body: html`<section class="card narrow" id="second-step">
  <h1 id="second-step-heading">${t.stepTitle}</h1>
  <p class="hint">${code ? t.stepLead : texts(view.locale).passkey.stepLead}</p>
  ${view.error ? html`<p class="alert" role="alert" id="second-step-error">${view.error}</p>` : ''}
  ${
    code
      ? html`<form method="post" action="/${view.locale}/signin/second-factor" id="second-step-form">
    <input type="hidden" name="_csrf" value="${view.csrf}">
    <label for="code">${t.code}</label>
    <input id="code" name="code" type="text" autocomplete="one-time-code" required maxlength="20" spellcheck="false" autofocus>
    <button type="submit">${t.verify}</button>
  </form>`
      : ''
  }
  ${
    view.passkey
      ? passkeyButton({
          locale: view.locale,
          csrf: view.csrf,
          id: 'second-step-passkey',
          path: `/${view.locale}/signin/second-factor/passkey`,
          label: code ? texts(view.locale).passkey.useInstead : texts(view.locale).passkey.use,
          primary: !code,
        })
      : ''
  }
</section>`,
  });
}
