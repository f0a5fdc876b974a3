import type { PersonalAccessToken } from '../pat/pat.entity';
import type { AuthorisedApp } from '../oauth/grants';
import type { LoginActivityItem } from '../pat/login-activity.service';
import { html, type SafeHtml } from '../web/html';
import { layout } from '../web/layout';
import { expiryBounds, type TokenField, type TokenFormValues } from './token-form';

export interface DashboardView {
  locale: string;
  user: { email: string; csrf: string };
  tokens: PersonalAccessToken[];
  /** OAuth grants: vendor apps this user has allowed. */
  apps: AuthorisedApp[];
  activity: { logins: LoginActivityItem[]; nextCursor: string | null; cursor?: string };
  /** The form as submitted when the server refused it. */
  form?: TokenFormValues;
  errors?: Partial<Record<TokenField | 'form', string>>;
  /** Just created: the only time the token string is ever shown. */
  created?: { token: string; name: string };
  notice?: string;
  now?: Date;
}

const when = (d: Date | null) => (d ? d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '—');
const status = (t: PersonalAccessToken, now: Date) => (t.revokedAt ? 'REVOKED' : t.expiresAt <= now ? 'EXPIRED' : 'ACTIVE');

export function dashboardPage(view: DashboardView): string {
  const now = view.now ?? new Date();
  return layout({
    title: 'Personal access tokens',
    locale: view.locale,
    user: view.user,
    body: html`
${view.notice ? html`<p class="notice" role="status" id="notice">${view.notice}</p>` : ''}
${view.created ? createdPanel(view.created) : ''}
${createForm(view, now)}
${tokenList(view, now)}
${appList(view)}
${activityList(view)}`,
  });
}

function createdPanel(created: { token: string; name: string }): SafeHtml {
  return html`<section class="card token-once" id="new-token-panel">
  <h2>Token "${created.name}" created</h2>
  <p><strong>Copy it now: it is shown only this once.</strong> Only a hash is kept, so nobody can show it to you again. Treat it like a password.</p>
  <label for="new-token">Your personal access token</label>
  <input id="new-token" type="text" readonly value="${created.token}" spellcheck="false">
  <button type="button" data-copy="new-token" id="copy-token">Copy</button>
</section>`;
}

function createForm(view: DashboardView, now: Date): SafeHtml {
  const { min, max } = expiryBounds(now);
  const f = view.form ?? { name: '', expires: '', scope: 'READ_ONLY', ips: '' };
  const e = view.errors ?? {};
  const error = (field: TokenField) => html`<p class="error" data-error-for="${field}" id="error-${field}">${e[field] ?? ''}</p>`;
  return html`<section class="card">
  <h1>Personal access tokens</h1>
  <p class="hint">For your own scripts: exchange the token at <code>POST /v1/pat/login</code> for a short-lived session token.</p>
  ${e.form ? html`<p class="alert" role="alert">${e.form}</p>` : ''}
  <form method="post" action="/${view.locale}/developer/tokens" data-validate novalidate id="create-token">
    <input type="hidden" name="_csrf" value="${view.user.csrf}">
    <label for="name">Name</label>
    <input id="name" name="name" type="text" required maxlength="100" value="${f.name}" placeholder="e.g. nightly report">
    ${error('name')}
    <label for="expires">Expiration date (UTC, from ${min} to ${max})</label>
    <input id="expires" name="expires" type="date" required min="${min}" max="${max}" value="${f.expires}">
    ${error('expires')}
    <fieldset>
      <legend>Access scope</legend>
      <input type="radio" id="scope-ro" name="scope" value="READ_ONLY" ${f.scope === 'READ_ONLY' ? 'checked' : ''}><label for="scope-ro">Read only (GET)</label>
      <input type="radio" id="scope-rw" name="scope" value="READ_WRITE" ${f.scope === 'READ_WRITE' ? 'checked' : ''}><label for="scope-rw">Read and write</label>
    </fieldset>
    ${error('scope')}
    <label for="ips">Allowed IP addresses (optional)</label>
    <textarea id="ips" name="ips" rows="2" placeholder="203.0.113.7, 2001:db8::/32">${f.ips}</textarea>
    <p class="hint">IPv4 or IPv6 addresses or CIDR ranges, separated by commas or new lines. Empty: any address.</p>
    ${error('ips')}
    <button type="submit">Create token</button>
  </form>
</section>`;
}

function tokenList(view: DashboardView, now: Date): SafeHtml {
  if (!view.tokens.length) return html`<section class="card"><h2>Your tokens</h2><p>No tokens yet.</p></section>`;
  return html`<section class="card">
  <h2>Your tokens</h2>
  <table id="tokens">
    <thead><tr><th>Name</th><th>Token id</th><th>Scope</th><th>IPs</th><th>Created</th><th>Expires</th><th>Last used</th><th>Last IP</th><th>Status</th><th></th></tr></thead>
    <tbody>
    ${view.tokens.map((t) => {
      const s = status(t, now);
      return html`<tr data-token-id="${t.id}">
      <td>${t.name}</td><td><code>${t.id}</code></td><td>${t.access}</td><td>${t.ipAllowlist.length ? t.ipAllowlist.join(', ') : 'any'}</td>
      <td>${when(t.createdAt)}</td><td>${when(t.expiresAt)}</td><td>${when(t.lastUsedAt)}</td><td>${t.lastUsedIp ?? '—'}</td>
      <td class="status-${s}">${s}</td>
      <td>${
        s === 'ACTIVE'
          ? html`<form method="post" action="/${view.locale}/developer/tokens/${t.id}/revoke" data-confirm="Revoke &quot;${t.name}&quot;? Scripts using it stop working at once.">
          <input type="hidden" name="_csrf" value="${view.user.csrf}"><button type="submit" class="danger">Revoke</button></form>`
          : ''
      }</td>
    </tr>`;
    })}
    </tbody>
  </table>
</section>`;
}

function appList(view: DashboardView): SafeHtml {
  if (!view.apps.length)
    return html`<section class="card" id="authorised-apps"><h2>Authorised apps</h2><p>You have not allowed any app to access your account.</p></section>`;
  return html`<section class="card" id="authorised-apps">
  <h2>Authorised apps</h2>
  <p class="hint">Apps you allowed to act for you. Revoking one ends every token it holds at once.</p>
  <table id="apps">
    <thead><tr><th>App</th><th>Access</th><th>Allowed</th><th>Last used</th><th></th></tr></thead>
    <tbody>
    ${view.apps.map(
      (a) => html`<tr data-grant-id="${a.grantId}">
      <td><a href="${a.homepageUrl}" rel="noopener noreferrer" target="_blank">${a.appName}</a></td><td><code>${a.scope.join(' ')}</code></td>
      <td>${when(a.grantedAt)}</td><td>${when(a.lastUsedAt)}</td>
      <td><form method="post" action="/${view.locale}/developer/apps/${a.grantId}/revoke" data-confirm="Revoke access for &quot;${a.appName}&quot;? It stops working at once.">
        <input type="hidden" name="_csrf" value="${view.user.csrf}"><button type="submit" class="danger">Revoke</button></form></td>
    </tr>`,
    )}
    </tbody>
  </table>
</section>`;
}

function activityList(view: DashboardView): SafeHtml {
  const { logins, nextCursor } = view.activity;
  return html`<section class="card">
  <h2>Login activity</h2>
  ${
    logins.length
      ? html`<table id="activity">
    <thead><tr><th>Time</th><th>Token</th><th>IP</th><th>User agent</th><th>Outcome</th></tr></thead>
    <tbody>
    ${logins.map(
      (l) =>
        html`<tr><td>${when(new Date(l.at))}</td><td>${l.tokenName ?? ''} <code>${l.tokenId ?? ''}</code></td><td>${l.ip ?? ''}</td><td>${l.userAgent ?? ''}</td><td class="outcome-${l.outcome}">${l.outcome}</td></tr>`,
    )}
    </tbody>
  </table>
  ${nextCursor ? html`<p><a href="/${view.locale}/developer?activity=${nextCursor}#activity">Older logins</a></p>` : ''}`
      : html`<p>No logins with your tokens yet.</p>`
  }
</section>`;
}
