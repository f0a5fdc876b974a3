/**
 * Placing orders from the dashboard's forms: a bracket order (a GTC limit entry with a
 * take-profit and a stop-loss) and a market order. Each is sent once per form shown (its
 * Idempotency-Key), and remembers the bid and ask this session last saw for the symbol, which
 * the orders table shows beside the price the order filled at: market buys fill at the ask,
 * sells at the bid. In DEV, the sandbox fills a working order in part on demand (no market move
 * needed), to see a partial fill and its webhook.
 */
import type express from 'express';
import type { Request, Response } from 'express';
import type { Schemas } from '@trading/api-client';
import { randomValue } from './oauth';
import type { VendorClient } from './vendor-client';

export function orderRoutes(app: express.Express, vendor: VendorClient): void {
  app.post('/orders', (req, res) => placeOrder(vendor, req, res, bracketOrder, 'Bracket order'));
  app.post('/market-orders', (req, res) => placeOrder(vendor, req, res, marketOrder, 'Market order'));
  app.post('/orders/:orderId/sandbox-fill', (req, res) => fillPart(vendor, req, res));
}

/** A form field, trimmed; empty when absent. */
type Field = (name: string) => string;

/** The bracket form's order: the entry (a GTC limit), a take-profit limit and a stop-loss on the other side. */
const bracketOrder = (f: Field): Schemas['OrderRequest'] => ({
  ...sideAndSize(f),
  type: 'LIMIT',
  timeInForce: 'GTC',
  limitPrice: f('limitPrice'),
  orderClass: 'BRACKET',
  takeProfit: { limitPrice: f('takeProfit') },
  stopLoss: { stopPrice: f('stopLoss') },
});

/** The market form's order: it fills at the quote (a buy at the ask, a sell at the bid), for the day. */
const marketOrder = (f: Field): Schemas['OrderRequest'] => ({ ...sideAndSize(f), type: 'MARKET', timeInForce: 'DAY' });

const sideAndSize = (f: Field) => ({
  accountId: f('accountId'),
  symbol: f('symbol').toUpperCase(),
  side: f('side') === 'SELL' ? ('SELL' as const) : ('BUY' as const),
  quantity: f('quantity'),
});

/** POST /oms/order with the form's order; the outcome is the next page's message. */
async function placeOrder(vendor: VendorClient, req: Request, res: Response, build: (f: Field) => Schemas['OrderRequest'], what: string) {
  const s = vendor.session(req, res);
  if (!s.tokens) return void res.redirect(303, '/');
  const f: Field = (name) => (typeof req.body?.[name] === 'string' ? (req.body[name] as string).trim() : '');
  const order = build(f);
  try {
    // What the visitor saw when choosing to place it: the quote the page last showed for the symbol.
    const quote = await vendor.quoteSeen(s, order.symbol);
    const placed = await vendor.api(s, (c) =>
      // The same key on every retry of this form: the API answers the first result again.
      c.POST('/oms/order', { body: order, params: { header: { 'Idempotency-Key': f('idempotencyKey') || randomValue() } } }),
    );
    if (placed.data) {
      vendor.placed(s, placed.data.id, quote);
      s.flash = { kind: 'notice', text: `${what} ${placed.data.id} placed: ${placed.data.status}.` };
    } else s.flash = { kind: 'error', text: refusal('The order was refused', placed) };
  } catch (err) {
    s.flash = { kind: 'error', text: (err as Error).message };
  }
  res.redirect(303, `/accounts?account=${encodeURIComponent(order.accountId)}`);
}

/** The API's problem, as the page says it: status, code, detail and the field it names. */
function refusal(what: string, placed: { error?: unknown; response: { status: number } }): string {
  const problem = placed.error as { detail?: string; field?: string; code?: string } | undefined;
  return `${what} (${placed.response.status}${problem?.code ? ` ${problem.code}` : ''}): ${problem?.detail ?? ''}${problem?.field ? ` [${problem.field}]` : ''}`;
}

/** About half of what is left, in whole shares: at least one, and all of it when less than two are left. */
function partOfRemainder(remaining: number): string {
  const half = Math.floor(remaining / 2);
  return String(half >= 1 ? half : remaining);
}

/**
 * POST /sandbox/orders/{orderId}/fill for about half of what the order has left, read fresh from
 * the API (the page may be a few seconds old). Only DEV tokens may: elsewhere the API's 403 is shown.
 */
async function fillPart(vendor: VendorClient, req: Request, res: Response) {
  const s = vendor.session(req, res);
  if (!s.tokens) return void res.redirect(303, '/');
  const orderId = String(req.params['orderId']);
  const accountId = typeof req.body?.['accountId'] === 'string' ? (req.body['accountId'] as string) : '';
  try {
    const order = await vendor.api(s, (c) => c.GET('/oms/{accountId}/order/{orderId}', { params: { path: { accountId, orderId } } }));
    if (!order.data) s.flash = { kind: 'error', text: refusal('The order could not be read', order) };
    else {
      const remaining = Number(order.data.quantity) - Number(order.data.filledQuantity);
      const quantity = partOfRemainder(remaining);
      // Nothing left (filled meanwhile): asked without a quantity, the API says why the order cannot fill.
      const body = remaining > 0 ? { quantity } : {};
      const filled = await vendor.api(s, (c) => c.POST('/sandbox/orders/{orderId}/fill', { params: { path: { orderId } }, body }));
      s.flash = filled.data
        ? {
            kind: 'notice',
            text: `Sandbox filled ${quantity} of order ${orderId}: ${filled.data.status} (${filled.data.filledQuantity}/${filled.data.quantity}).`,
          }
        : { kind: 'error', text: refusal('The sandbox refused the fill', filled) };
    }
  } catch (err) {
    s.flash = { kind: 'error', text: (err as Error).message };
  }
  res.redirect(303, `/accounts?account=${encodeURIComponent(accountId)}`);
}
