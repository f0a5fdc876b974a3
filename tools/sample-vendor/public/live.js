// Live quotes and orders for the dashboard: asks the vendor's own backend (GET /live.json, by the
// session cookie) every few seconds and rewrites two tables. No token ever reaches the browser:
// the backend calls the Trading API. Without JavaScript the page still shows what it had on load.
(function () {
  'use strict';
  const root = document.querySelector('[data-live]');
  if (!root) return;
  const url = root.getAttribute('data-live');
  const every = Number(root.getAttribute('data-interval') || '2000');
  const status = document.getElementById('live-status');
  // With write:orders, a working order gets the sandbox's "Fill part" button, as the server draws it.
  const fills = root.hasAttribute('data-fill');
  // The orders as last drawn: an unchanged table is left alone (a button being clicked stays put).
  let drawnOrders = '';

  function cell(row, label, text, className) {
    const td = document.createElement('td');
    td.setAttribute('data-label', label);
    td.textContent = text == null ? '' : String(text);
    if (className) td.className = className;
    row.appendChild(td);
  }

  function renderQuotes(quotes) {
    const body = document.querySelector('#quotes tbody');
    if (!body) return;
    body.replaceChildren(
      ...quotes.map((q) => {
        const row = document.createElement('tr');
        row.setAttribute('data-symbol', q.symbol);
        cell(row, 'Symbol', q.symbol);
        cell(row, 'Bid', q.bid, 'num');
        cell(row, 'Ask', q.ask, 'num');
        cell(row, 'Last', q.lastPrice, 'num');
        return row;
      }),
    );
  }

  function fillForm(o) {
    const form = document.createElement('form');
    form.method = 'post';
    form.action = '/orders/' + encodeURIComponent(o.id) + '/sandbox-fill';
    const account = document.createElement('input');
    account.type = 'hidden';
    account.name = 'accountId';
    account.value = o.accountId;
    const button = document.createElement('button');
    button.type = 'submit';
    button.className = 'secondary fill-part';
    button.textContent = 'Fill part (sandbox)';
    form.append(account, button);
    return form;
  }

  function renderOrders(orders) {
    const body = document.querySelector('#orders tbody');
    const drawn = JSON.stringify(orders);
    if (!body || drawn === drawnOrders) return;
    drawnOrders = drawn;
    body.replaceChildren(
      ...orders.map((o) => {
        const row = document.createElement('tr');
        row.setAttribute('data-order', o.id);
        cell(row, 'Order', o.label);
        cell(row, 'Qty', o.quantity, 'num');
        cell(row, 'Price', o.price, 'num');
        cell(row, 'Bid / ask when placed', o.quoteWhenPlaced, 'num');
        cell(row, 'Filled at', o.filledAt, 'num');
        cell(row, 'Status', o.status);
        const sandbox = document.createElement('td');
        sandbox.setAttribute('data-label', 'Sandbox');
        if (fills && o.working) sandbox.appendChild(fillForm(o));
        row.appendChild(sandbox);
        return row;
      }),
    );
  }

  async function tick() {
    try {
      const res = await fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
      if (!res.ok) throw new Error(String(res.status));
      const live = await res.json();
      if (live.quotes) renderQuotes(live.quotes);
      if (live.orders) renderOrders(live.orders);
      // The page's one time format (YYYY-MM-DD HH:MM:SS UTC), whatever the browser's locale.
      if (status) status.textContent = 'Live · updated ' + new Date().toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
    } catch (err) {
      if (status) status.textContent = 'Live updates paused (' + err.message + '), retrying…';
    }
    setTimeout(tick, every);
  }
  setTimeout(tick, every);
})();
