/**
 * The sample vendor's HTML: the page frame every route answers with, and the dashboard's sections
 * (accounts, positions, quotes, balances, orders, the bracket and market order forms, the
 * connection). Every value from the API or the visitor is escaped.
 */
import type { Schemas } from '@trading/api-client';
import { randomValue } from './oauth';
import type { OrderRow, VisitorSession } from './vendor-client';

export const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Every page: a viewport for phones, one stylesheet file, at most one script file; nothing inline. */
export const page = (title: string, body: string, options: { header?: string; script?: boolean; mainClass?: string } = {}) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<title>${escape(title)} · Sample vendor</title><link rel="stylesheet" href="/style.css">` +
  (options.script ? '<script src="/live.js" defer></script>' : '') +
  `</head><body><header><img src="/logo.svg" alt=""><h1>Sample vendor app</h1>${options.header ?? ''}</header>` +
  `<main${options.mainClass ? ` class="${options.mainClass}"` : ''}>${body}</main></body></html>`;

export const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><rect width="64" height="64" rx="12" fill="#0f766e"/><path d="M14 44 L26 30 L36 38 L50 20" stroke="#fff" stroke-width="5" fill="none" stroke-linecap="round"/></svg>`;

const cell = (label: string, value: string, cls = '') => `<td data-label="${label}"${cls ? ` class="${cls}"` : ''}>${escape(value)}</td>`;
const signClass = (v: string) => (v.startsWith('-') ? 'num down' : Number(v) > 0 ? 'num up' : 'num');
/** Prices rounded to the cent: the demo instruments tick in 0.01. */
const cents = (n: number) => n.toFixed(2);
/** Every time the app shows, one way: `YYYY-MM-DD HH:MM:SS UTC` (public/live.js writes the same). */
export const utcTime = (d: Date) => `${d.toISOString().replace('T', ' ').slice(0, 19)} UTC`;

/** Everything the dashboard shows, read from the API with the visitor's tokens. */
export interface Dashboard {
  /** The signed-in person's name. */
  name: string;
  accounts: Array<Schemas['Account']>;
  /** The account shown: the one asked for, else the first. */
  accountId: string | undefined;
  held: Array<Schemas['PositionItem']>;
  /** GET /banking/{accountId}/balance's answer; undefined when not asked (no account, or no read:banking). */
  balances: { data?: { balances: Array<Schemas['CashBalance']> }; response: { status: number } } | undefined;
  quotes: Array<Schemas['MarketQuote']> | undefined;
  orders: OrderRow[] | undefined;
  readMarket: boolean;
  writeOrders: boolean;
  liveIntervalMs: number | undefined;
}

/** The dashboard page, with the session's one message (`flash`) above it. */
export function dashboardPage(d: Dashboard, s: VisitorSession, flash: VisitorSession['flash']): string {
  const header =
    `<p id="who">Hello ${escape(d.name)}</p>` +
    `<form method="post" action="/disconnect"><button id="disconnect" class="secondary" type="submit">Disconnect</button></form>`;
  const flashHtml = flash
    ? `<p id="${flash.kind === 'error' ? 'order-error' : 'notice'}" class="notice wide${flash.kind === 'error' ? ' error' : ''}">${escape(flash.text)}</p>`
    : '';
  const liveUrl = `/live.json${d.accountId ? `?account=${encodeURIComponent(d.accountId)}` : ''}`;
  return page(
    'Accounts',
    flashHtml +
      accountsHtml(d) +
      positionsHtml(d) +
      quotesHtml(d) +
      balancesHtml(d) +
      ordersHtml(d) +
      orderFormHtml(d) +
      marketFormHtml(d) +
      connectionHtml(s, d.liveIntervalMs) +
      `<div hidden data-live="${escape(liveUrl)}" data-interval="${d.liveIntervalMs ?? 2000}"${d.writeOrders ? ' data-fill' : ''}></div>`,
    { header, script: true, mainClass: 'dashboard' },
  );
}

function accountsHtml({ accounts, accountId }: Dashboard): string {
  return (
    `<section class="wide"><h2>Accounts</h2><ul id="accounts" class="accounts">` +
    accounts
      .map(
        (a) =>
          `<li><a href="/accounts?account=${encodeURIComponent(a.id)}"${a.id === accountId ? ' aria-current="page"' : ''}>${escape(a.number)} <small>(${escape(a.type)}, ${escape(a.baseCurrency)})</small></a></li>`,
      )
      .join('') +
    `</ul></section>`
  );
}

function balancesHtml({ balances }: Dashboard): string {
  if (!balances) return '';
  return (
    `<section><h2>Balances</h2>` +
    (balances.data
      ? `<div class="table-scroll"><table id="balances" class="cards"><thead><tr><th>Currency</th><th class="num">Cash</th><th class="num">Available to trade</th><th class="num">Pending in</th><th class="num">Pending out</th></tr></thead><tbody>` +
        balances.data.balances
          .map((b) => {
            const c = b as typeof b & { pendingIn?: string; pendingOut?: string };
            return `<tr>${cell('Currency', c.currency)}${cell('Cash', c.cash, 'num')}${cell('Available to trade', c.availableToTrade, 'num')}${cell('Pending in', c.pendingIn ?? '—', 'num')}${cell('Pending out', c.pendingOut ?? '—', 'num')}</tr>`;
          })
          .join('') +
        `</tbody></table></div>`
      : `<p class="muted">Balances unavailable (${balances.response.status}).</p>`) +
    `</section>`
  );
}

function positionsHtml({ held }: Dashboard): string {
  return (
    `<section><h2>Positions</h2>` +
    (held.length
      ? `<div class="table-scroll"><table id="positions" class="cards"><thead><tr><th>Symbol</th><th class="num">Quantity</th><th class="num">Price</th><th class="num">Value</th><th class="num">Unrealised P&amp;L</th></tr></thead><tbody>` +
        held
          .map(
            (p) =>
              `<tr>${cell('Symbol', p.symbol)}${cell('Quantity', p.quantity, 'num')}${cell('Price', p.marketPrice, 'num')}${cell('Value', `${p.marketValue} ${p.currency}`, 'num')}${cell('Unrealised P&L', p.unrealizedPnl, signClass(p.unrealizedPnl))}</tr>`,
          )
          .join('') +
        `</tbody></table></div>`
      : `<p id="no-positions" class="muted">No positions in this account.</p>`) +
    `</section>`
  );
}

function quotesHtml({ quotes, readMarket }: Dashboard): string {
  if (!quotes) return readMarket ? '' : `<section><h2>Quotes</h2><p class="muted">Ask for read:market to see live quotes.</p></section>`;
  return (
    `<section><h2>Quotes</h2><div class="table-scroll"><table id="quotes" class="cards"><thead><tr><th>Symbol</th><th class="num">Bid</th><th class="num">Ask</th><th class="num">Last</th></tr></thead><tbody>` +
    quotes
      .map(
        (q) =>
          `<tr data-symbol="${escape(q.symbol)}">${cell('Symbol', q.symbol)}${cell('Bid', q.bid, 'num')}${cell('Ask', q.ask, 'num')}${cell('Last', q.lastPrice, 'num')}</tr>`,
      )
      .join('') +
    `</tbody></table></div></section>`
  );
}

/** A working order's sandbox button (public/live.js draws the same): POST /orders/{id}/sandbox-fill. */
const fillForm = (o: OrderRow) =>
  `<form method="post" action="/orders/${encodeURIComponent(o.id)}/sandbox-fill"><input type="hidden" name="accountId" value="${escape(o.accountId)}">` +
  `<button class="secondary fill-part" type="submit">Fill part (sandbox)</button></form>`;

/** The latest orders: what each asked for, the quote it was placed against (placed here), the price it filled at. */
function ordersHtml({ orders, writeOrders }: Dashboard): string {
  if (!orders) return '';
  return (
    `<section class="wide"><h2>Orders</h2><p><a id="webhooks-link" href="/webhooks">Webhooks received</a></p>` +
    `<div class="table-scroll"><table id="orders" class="cards"><thead><tr><th>Order</th><th class="num">Filled/Qty</th><th class="num">Price</th><th class="num">Bid / ask when placed</th><th class="num">Filled at</th><th>Status</th><th>Sandbox</th></tr></thead><tbody>` +
    orders
      .map(
        (o) =>
          `<tr data-order="${escape(o.id)}">${cell('Order', o.label)}${cell('Qty', o.quantity, 'num')}${cell('Price', o.price, 'num')}${cell('Bid / ask when placed', o.quoteWhenPlaced, 'num')}${cell('Filled at', o.filledAt, 'num')}${cell('Status', o.status)}` +
          `<td data-label="Sandbox">${writeOrders && o.working ? fillForm(o) : ''}</td></tr>`,
      )
      .join('') +
    `</tbody></table></div>` +
    `<p id="fill-rule" class="muted">Market buys fill at the ask and market sells at the bid; a limit order fills at the quote too (at the ask or the bid, once that reaches its limit), not at its limit price. ` +
    `Filled at: the order's average fill price, as the API reports it. Bid / ask when placed: the quote this app last read for the symbol before it sent an order from this page. ` +
    `Fill part (sandbox): a DEV token's sandbox fills about half of what a working order has left, at its limit (or the quote).</p>` +
    `</section>`
  );
}

/** The bracket form: entry limit, take-profit above it, stop-loss below, prefilled from the first quote. */
function orderFormHtml({ accountId, quotes, writeOrders }: Dashboard): string {
  if (!accountId) return '';
  if (!writeOrders)
    return `<section class="wide"><h2>Place a bracket order</h2><p class="muted">Ask for write:orders (SAMPLE_VENDOR_SCOPES) to place orders.</p></section>`;
  const first = quotes?.[0];
  const entry = first ? Number(first.bid) : 0;
  return (
    `<section class="wide"><h2>Place a bracket order</h2>` +
    `<form id="order-form" class="order" method="post" action="/orders">` +
    `<input type="hidden" name="accountId" value="${escape(accountId)}">` +
    // One key per form shown: a resubmission (double click, retry) places the order once.
    `<input type="hidden" name="idempotencyKey" value="${escape(randomValue())}">` +
    `<label>Symbol<input id="order-symbol" name="symbol" required value="${escape(first?.symbol ?? '')}" autocapitalize="characters"></label>` +
    `<label>Side<select id="order-side" name="side"><option>BUY</option><option>SELL</option></select></label>` +
    `<label>Quantity<input id="order-quantity" name="quantity" inputmode="decimal" required value="1"></label>` +
    `<label>Entry limit<input id="order-limit" name="limitPrice" inputmode="decimal" required value="${entry ? cents(entry) : ''}"></label>` +
    `<label>Take-profit<input id="order-take-profit" name="takeProfit" inputmode="decimal" required value="${entry ? cents(entry * 1.05) : ''}"></label>` +
    `<label>Stop-loss<input id="order-stop-loss" name="stopLoss" inputmode="decimal" required value="${entry ? cents(entry * 0.95) : ''}"></label>` +
    `<p class="actions"><button id="place-order" type="submit">Place bracket order</button> <small>GTC; the exits start when the entry fills and cancel each other.</small></p>` +
    `</form></section>`
  );
}

/** A market order: no price to give, it fills at the quote (a buy at the ask, a sell at the bid). */
function marketFormHtml({ accountId, quotes, writeOrders }: Dashboard): string {
  if (!accountId || !writeOrders) return '';
  return (
    `<section class="wide"><h2>Place a market order</h2>` +
    `<form id="market-form" class="order" method="post" action="/market-orders">` +
    `<input type="hidden" name="accountId" value="${escape(accountId)}">` +
    `<input type="hidden" name="idempotencyKey" value="${escape(randomValue())}">` +
    `<label>Symbol<input id="market-symbol" name="symbol" required value="${escape(quotes?.[0]?.symbol ?? '')}" autocapitalize="characters"></label>` +
    `<label>Side<select id="market-side" name="side"><option>BUY</option><option>SELL</option></select></label>` +
    `<label>Quantity<input id="market-quantity" name="quantity" inputmode="decimal" required value="1"></label>` +
    `<p class="actions"><button id="place-market-order" type="submit">Place market order</button> <small>DAY; a buy fills at the ask, a sell at the bid.</small></p>` +
    `</form></section>`
  );
}

/** How the session is connected: scope, token type and binding, the last call's scheme, refreshes. */
function connectionHtml(s: VisitorSession, liveIntervalMs: number | undefined): string {
  const tokens = s.tokens!;
  return (
    `<section class="wide"><h2>Connection</h2>` +
    `<p>Scope: <code id="scope">${escape(tokens.scope)}</code>. Tokens: <strong id="token-type">${escape(tokens.tokenType)}</strong>` +
    (s.dpop ? ` (bound to key <code id="dpop-jkt">${escape(s.dpop.thumbprint)}</code>)` : '') +
    `; last API call authorised with <strong id="auth-scheme">${escape(s.lastAuthScheme ?? '')}</strong>.</p>` +
    (s.user ? `<p id="id-token">Signed in with OpenID Connect: verified ID token for ${escape(s.user.email ?? s.user.sub)}.</p>` : '') +
    `<p id="refreshes">Token refreshed ${s.refreshes} time(s); access token valid until ${utcTime(new Date(tokens.expiresAt))}.</p>` +
    `<p id="live-status" class="muted">Live updates every ${Math.round((liveIntervalMs ?? 2000) / 1000)} s.</p>` +
    `<div class="inline-forms"><form method="post" action="/expire"><button id="expire" class="secondary" type="submit">Pretend the access token expired</button></form></div>` +
    `</section>`
  );
}
