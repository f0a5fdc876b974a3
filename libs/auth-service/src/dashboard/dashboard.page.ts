import type { PersonalAccessToken } from '../pat/pat.entity';
import type { AuthorisedApp } from '../oauth/grants';
import type { LoginActivityItem } from '../pat/login-activity.service';
import type { SecurityEvent } from '../security-log/security-log';
import { accountLabel, type UserAccount } from '../users/user-accounts';
import { html, type SafeHtml } from '../web/html';
import { isoMinute, lastValidDay } from '../web/dates';
import { layout } from '../web/layout';
import { texts, type Texts } from '../web/texts';
import { expiryBounds, type TokenField, type TokenFormValues } from './token-form';

export interface DashboardView {
  locale: string;
  user: { email: string; csrf: string };
  tokens: PersonalAccessToken[];
  /** OAuth grants: vendor apps this user has allowed. */
  apps: AuthorisedApp[];
  /** The user's accounts, to limit a new token or an app to some of them. */
  accounts?: UserAccount[];
  activity: { logins: LoginActivityItem[]; nextCursor: string | null; cursor?: string };
  /** The user's security log: the last 90 days, newest first. */
  securityLog?: SecurityEvent[];
  /** The form as submitted when the server refused it. */
  form?: TokenFormValues;
  errors?: Partial<Record<TokenField | 'form', string>>;
  /** Just created (read once from the flash after the form's redirect): the only time the token string is ever shown. */
  created?: { token: string; name: string };
  notice?: string;
  /** Shown above the token form when a READ_WRITE token would first need a code (see `stepUpForm`). */
  stepUp?: SafeHtml;
  /** The "Security" section: the user's authenticator app (see `securitySection`). */
  security?: SafeHtml;
  now?: Date;
}

/**
 * Text a line may break only at its spaces: Chromium also breaks after a hyphen ("2026-|01-31",
 * "User-|Agent"), so each word holding one is kept whole. One element, so a card's line keeps it together.
 */
const words = (text: string) =>
  html`<span>${text.split(/(\s+)/).map((part) => (part.includes('-') ? html`<span class="w">${part}</span>` : part))}</span>`;
const when = (d: Date | null) => (d ? words(isoMinute(d)) : '—');
const status = (t: PersonalAccessToken, now: Date) => (t.revokedAt ? 'REVOKED' : t.expiresAt <= now ? 'EXPIRED' : 'ACTIVE');

export function dashboardPage(view: DashboardView): string {
  const now = view.now ?? new Date();
  const t = texts(view.locale).dashboard;
  return layout({
    title: t.title,
    locale: view.locale,
    user: view.user,
    here: `/${view.locale}/developer`,
    body: html`
${view.notice ? html`<p class="notice" role="status" id="notice">${view.notice}</p>` : ''}
${view.created ? createdPanel(view.created, t) : ''}
${createForm(view, now, t)}
${tokenList(view, now, t)}
${appList(view, t)}
${view.security ?? ''}
${activityList(view, t)}
${securityLogList(view)}`,
  });
}

type DashboardTexts = Texts['dashboard'];

/** The sentences the page's script shows before anything is sent (the server's own checks say the same). */
const scriptMessages = (t: DashboardTexts, max: string) =>
  JSON.stringify({
    'name.missing': t.nameMissing,
    'name.long': t.nameTooLong(100),
    scope: t.scopeMissing,
    ips: t.ipInvalid('{value}'),
    'expires.format': t.dateFormat,
    'expires.past': t.datePast,
    'expires.far': t.dateTooFar(max),
  });

function createdPanel(created: { token: string; name: string }, t: DashboardTexts): SafeHtml {
  return html`<section class="card token-once" id="new-token-panel">
  <h2>${t.created(created.name)}</h2>
  <p><strong>${t.copyNow}</strong> ${t.onlyHash}</p>
  <label for="new-token">${t.yourToken}</label>
  <input id="new-token" type="text" readonly value="${created.token}" spellcheck="false">
  <button type="button" data-copy="new-token" data-copied-label="${t.copied}" id="copy-token">${t.copy}</button>
</section>`;
}

function createForm(view: DashboardView, now: Date, t: DashboardTexts): SafeHtml {
  const { min, max } = expiryBounds(now);
  const f = view.form ?? { name: '', expires: '', scope: 'READ_ONLY', ips: '', accounts: [] };
  const e = view.errors ?? {};
  const error = (field: TokenField) => html`<p class="error" data-error-for="${field}" id="error-${field}">${e[field] ?? ''}</p>`;
  return html`<section class="card">
  <h1>${t.title}</h1>
  <p class="hint">${t.intro[0]} <code>POST /v1/pat/login</code> ${t.intro[1]}</p>
  ${e.form ? html`<p class="alert" role="alert">${e.form}</p>` : ''}
  ${view.stepUp ?? ''}
  <form method="post" action="/${view.locale}/developer/tokens" data-validate data-messages="${scriptMessages(t, max)}" novalidate id="create-token">
    <input type="hidden" name="_csrf" value="${view.user.csrf}">
    <label for="name">${t.name}</label>
    <input id="name" name="name" type="text" required maxlength="100" value="${f.name}" placeholder="${t.namePlaceholder}">
    ${error('name')}
    <label for="expires">${t.expires(min, max)}</label>
    <input id="expires" name="expires" type="text" inputmode="numeric" autocomplete="off" required pattern="\\d{4}-\\d{2}-\\d{2}" placeholder="YYYY-MM-DD" data-min="${min}" data-max="${max}" maxlength="10" aria-describedby="expires-hint" value="${f.expires}">
    <p class="hint" id="expires-hint">${t.dateHint}</p>
    ${error('expires')}
    <fieldset>
      <legend>${t.scope}</legend>
      <input type="radio" id="scope-ro" name="scope" value="READ_ONLY" ${f.scope === 'READ_ONLY' ? 'checked' : ''}><label for="scope-ro">${t.readOnly}</label>
      <input type="radio" id="scope-rw" name="scope" value="READ_WRITE" ${f.scope === 'READ_WRITE' ? 'checked' : ''}><label for="scope-rw">${t.readWrite}</label>
    </fieldset>
    ${error('scope')}
    <label for="ips">${t.ips}</label>
    <textarea id="ips" name="ips" rows="2" placeholder="203.0.113.7, 2001:db8::/32">${f.ips}</textarea>
    <p class="hint">${t.ipsHint}</p>
    ${error('ips')}
    ${
      view.accounts?.length
        ? html`<fieldset id="token-accounts">
      <legend>${t.tokenAccounts}</legend>
      ${accountChoices(view.accounts, 'token-account', (id) => f.accounts.includes(id))}
      <p class="hint">${t.tokenAccountsHint}</p>
    </fieldset>`
        : ''
    }
    ${error('accounts')}
    <button type="submit">${t.create}</button>
  </form>
</section>`;
}

/** A checkbox per account (`prefix` keeps ids unique on the page). */
const accountChoices = (accounts: UserAccount[], prefix: string, ticked: (accountId: string) => boolean) =>
  accounts.map(
    (a) =>
      html`<input type="checkbox" id="${prefix}-${a.accountId}" name="accounts" value="${a.accountId}" ${ticked(a.accountId) ? 'checked' : ''}><label for="${prefix}-${a.accountId}">${accountLabel(a)}</label>`,
  );

/** The accounts a token or an app reaches, in words: every one, or the chosen ones by type and number. */
function reachedAccounts(accountIds: string[] | null, accounts: UserAccount[] | undefined, t: DashboardTexts): SafeHtml | string {
  if (!accountIds) return t.allAccounts;
  if (!accountIds.length) return t.noAccounts;
  return html`${accountIds.map((id, i) => {
    const known = accounts?.find((a) => a.accountId === id);
    return html`${i ? ', ' : ''}<span data-account="${id}">${known ? accountLabel(known) : id}</span>`;
  })}`;
}

/** A table that is a table on a wide screen and a stack of labelled cards on a phone (each cell carries its column's name). */
const head = (labels: string[]) => html`<thead><tr>${labels.map((l) => html`<th>${words(l)}</th>`)}</tr></thead>`;

function tokenList(view: DashboardView, now: Date, t: DashboardTexts): SafeHtml {
  if (!view.tokens.length) return html`<section class="card"><h2>${t.yourTokens}</h2><p>${t.noTokens}</p></section>`;
  return html`<section class="card">
  <h2>${t.yourTokens}</h2>
  <table id="tokens" class="stack">
    ${head([t.name, t.tokenId, t.scope, t.ipsColumn, t.createdAt, t.validThrough, t.lastUsed, t.lastIp, t.statusColumn, ''])}
    <tbody>
    ${view.tokens.map((token) => {
      const s = status(token, now);
      return html`<tr data-token-id="${token.id}">
      <td data-label="${t.name}">${words(token.name)}</td><td data-label="${t.tokenId}"><code>${token.id}</code></td><td data-label="${t.scope}"><code>${token.access}</code> <span class="token-accounts">${reachedAccounts(token.accountIds, view.accounts, t)}</span></td>
      <td data-label="${t.ipsColumn}">${token.ipAllowlist.length ? token.ipAllowlist.join(', ') : t.any}</td>
      <td data-label="${t.createdAt}">${when(token.createdAt)}</td><td data-label="${t.validThrough}" class="day">${lastValidDay(token.expiresAt)}</td>
      <td data-label="${t.lastUsed}">${when(token.lastUsedAt)}</td><td data-label="${t.lastIp}">${token.lastUsedIp ?? '—'}</td>
      <td data-label="${t.statusColumn}" class="status-${s}" data-status="${s}">${t.status[s]}</td>
      <td>${
        s === 'ACTIVE'
          ? html`<form method="post" action="/${view.locale}/developer/tokens/${token.id}/revoke" data-confirm="${t.confirmRevokeToken(token.name)}">
          <input type="hidden" name="_csrf" value="${view.user.csrf}"><button type="submit" class="danger">${t.revoke}</button></form>`
          : ''
      }</td>
    </tr>`;
    })}
    </tbody>
  </table>
</section>`;
}

function appList(view: DashboardView, t: DashboardTexts): SafeHtml {
  if (!view.apps.length) return html`<section class="card" id="authorised-apps"><h2>${t.apps}</h2><p>${t.noApps}</p></section>`;
  return html`<section class="card" id="authorised-apps">
  <h2>${t.apps}</h2>
  <p class="hint">${t.appsHint}</p>
  <table id="apps" class="stack">
    ${head([t.app, t.access, t.accountsColumn, t.allowed, t.lastUsed, ''])}
    <tbody>
    ${view.apps.map(
      (a) => html`<tr data-grant-id="${a.grantId}" data-app-id="${a.appId}">
      <td data-label="${t.app}"><a href="${a.homepageUrl}" rel="noopener noreferrer" target="_blank">${words(a.appName)}</a></td><td data-label="${t.access}">${a.scope.map((scope, i) => html`${i ? ' ' : ''}<code>${scope}</code>`)}</td>
      <td data-label="${t.accountsColumn}"><span class="app-accounts">${reachedAccounts(a.accountIds, view.accounts, t)}</span>${
        view.accounts?.length
          ? html`<details><summary>${t.changeAccounts}</summary><form method="post" action="/${view.locale}/developer/apps/${a.grantId}/accounts" class="app-accounts-form">
        <input type="hidden" name="_csrf" value="${view.user.csrf}">
        ${accountChoices(view.accounts, `app-${a.grantId}`, (id) => !a.accountIds || a.accountIds.includes(id))}
        <button type="submit">${t.saveAccounts}</button></form></details>`
          : ''
      }</td>
      <td data-label="${t.allowed}">${when(a.grantedAt)}</td><td data-label="${t.lastUsed}">${when(a.lastUsedAt)}</td>
      <td><form method="post" action="/${view.locale}/developer/apps/${a.grantId}/revoke" data-confirm="${t.confirmRevokeApp(a.appName)}">
        <input type="hidden" name="_csrf" value="${view.user.csrf}"><button type="submit" class="danger">${t.revoke}</button></form></td>
    </tr>`,
    )}
    </tbody>
  </table>
</section>`;
}

function activityList(view: DashboardView, t: DashboardTexts): SafeHtml {
  const { logins, nextCursor } = view.activity;
  return html`<section class="card">
  <h2>${t.activity}</h2>
  ${
    logins.length
      ? html`<table id="activity" class="stack">
    ${head([t.time, t.token, t.ip, t.userAgent, t.outcomeColumn])}
    <tbody>
    ${logins.map(
      (l) =>
        html`<tr><td data-label="${t.time}">${when(new Date(l.at))}</td><td data-label="${t.token}">${words(l.tokenName ?? '')} <code>${l.tokenId ?? ''}</code></td><td data-label="${t.ip}">${l.ip ?? ''}</td><td data-label="${t.userAgent}">${words(l.userAgent ?? '')}</td><td data-label="${t.outcomeColumn}" class="outcome-${l.outcome}" data-outcome="${l.outcome}">${t.outcome[l.outcome] ?? l.outcome}</td></tr>`,
    )}
    </tbody>
  </table>
  ${nextCursor ? html`<p><a href="/${view.locale}/developer?activity=${nextCursor}#activity">${t.older}</a></p>` : ''}`
      : html`<p>${t.noLogins}</p>`
  }
</section>`;
}

/** The security log: what happened on the account in the last 90 days (every value escaped by `html`). */
function securityLogList(view: DashboardView): SafeHtml {
  const t = texts(view.locale).securityLog;
  const events = view.securityLog ?? [];
  const details = (e: SecurityEvent) => {
    const d = e.detail;
    if (d['factor'] === 'otp') return t.withCode;
    if (e.type === 'factor_added' || e.type === 'factor_removed')
      return d['factor'] === 'passkey' ? html`${t.factorKinds.passkey} ${String(d['factorName'] ?? '')}` : t.factorKinds.otp;
    if (e.type === 'app_accounts_changed') return t.accountCount(String(d['accounts'] ?? ''));
    if (d['factor'] === 'passkey') return t.withPasskey;
    if (typeof d['tokenId'] === 'string')
      return html`${t.token(String(d['tokenName'] ?? ''), d['tokenId'])} <code>${String(d['scope'] ?? '')}</code>`;
    return typeof d['scope'] === 'string' && d['scope'] ? t.access(d['scope']) : '';
  };
  return html`<section class="card" id="security-log">
  <h2>${t.title}</h2>
  <p class="hint">${t.hint}</p>
  ${
    events.length
      ? html`<table id="security-events" class="stack">
    ${head([t.event, t.time, t.address, t.app, t.details])}
    <tbody>
    ${events.map(
      (e) =>
        html`<tr data-event-type="${e.type}"><td data-label="${t.event}">${t.types[e.type]}</td><td data-label="${t.time}">${when(e.occurredAt)}</td><td data-label="${t.address}">${e.address ?? '—'}</td><td data-label="${t.app}">${e.app ? words(e.app.name) : '—'}</td><td data-label="${t.details}">${details(e)}</td></tr>`,
    )}
    </tbody>
  </table>`
      : html`<p>${t.none}</p>`
  }
</section>`;
}
