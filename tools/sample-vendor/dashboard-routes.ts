/**
 * The dashboard: the page (accounts, balances, positions, quotes, orders) read from the API with
 * the visitor's tokens, and its live data, which the page's script asks this backend for every
 * few seconds (no token ever reaches the browser).
 */
import type express from 'express';
import type { Request, Response } from 'express';
import { dashboardPage, escape, page, type Dashboard } from './pages';
import type { VendorClient, VisitorSession } from './vendor-client';

export function dashboardRoutes(app: express.Express, vendor: VendorClient): void {
  app.get('/accounts', (req, res) => dashboard(vendor, req, res));
  app.get('/live.json', (req, res) => liveJson(vendor, req, res));
}

async function dashboard(vendor: VendorClient, req: Request, res: Response) {
  const s = vendor.session(req, res);
  if (!s.tokens) return void res.redirect(303, '/');
  const flash = s.flash;
  s.flash = undefined;
  try {
    const read = await readDashboard(vendor, s, req.query['account']);
    if (typeof read === 'string') return void res.status(502).send(page('Error', read));
    res.send(dashboardPage(read, s, flash));
  } catch (err) {
    s.tokens = undefined; // e.g. the user revoked the app: connect again
    res
      .status(401)
      .send(
        page(
          'Disconnected',
          `<section><p id="error">${escape((err as Error).message)}</p><p><a class="button" href="/connect">Connect again</a></p></section>`,
        ),
      );
  }
}

/** What the dashboard shows of the account asked for (`wanted`, else the first); the error's HTML when GET /accounts fails. */
async function readDashboard(vendor: VendorClient, s: VisitorSession, wanted: unknown): Promise<Dashboard | string> {
  const [me, accounts] = await Promise.all([
    !vendor.fapi && vendor.granted(s, 'read:accounts') ? vendor.api(s, (c) => c.GET('/oauth/userinfo')) : undefined,
    vendor.api(s, (c) => c.GET('/accounts')),
  ]);
  if (!accounts.data)
    return `<section><p id="error">GET /accounts answered ${accounts.response.status}: ${escape(JSON.stringify(accounts.error))}</p></section>`;
  const list = accounts.data.accounts;
  const account = list.find((a) => a.id === (typeof wanted === 'string' ? wanted : '')) ?? list[0];
  const accountId = account?.id;
  const { held, balances } = await readAccount(vendor, s, accountId);
  const { quotes, orders } = await vendor.live(s, accountId, vendor.quoted(held));
  return {
    name: vendor.fapi ? (s.user?.name ?? '') : `${me?.data?.firstName ?? ''} ${me?.data?.lastName ?? ''}`.trim(),
    accounts: list,
    accountId,
    held,
    balances,
    quotes,
    orders,
    readMarket: vendor.granted(s, 'read:market'),
    writeOrders: vendor.granted(s, 'write:orders'),
    liveIntervalMs: vendor.config.liveIntervalMs,
  };
}

/** The account's positions, and its balances where read:banking was granted. */
async function readAccount(vendor: VendorClient, s: VisitorSession, accountId: string | undefined) {
  const [positions, balances] = await Promise.all([
    accountId ? vendor.api(s, (c) => c.GET('/accounts/{accountId}/positions', { params: { path: { accountId } } })) : undefined,
    accountId && vendor.granted(s, 'read:banking')
      ? vendor.api(s, (c) => c.GET('/banking/{accountId}/balance', { params: { path: { accountId } } }))
      : undefined,
  ]);
  return { held: positions?.data?.positions ?? [], balances };
}

/** The page's live data: quotes and orders, fetched by this backend with the session's tokens. */
async function liveJson(vendor: VendorClient, req: Request, res: Response) {
  const s = vendor.session(req, res);
  if (!s.tokens) return void res.status(401).json({ error: 'not connected' });
  const accountId = typeof req.query['account'] === 'string' ? req.query['account'] : undefined;
  try {
    const positions = accountId
      ? await vendor.api(s, (c) => c.GET('/accounts/{accountId}/positions', { params: { path: { accountId } } }))
      : undefined;
    const symbols = vendor.quoted(positions?.data?.positions ?? []);
    res.setHeader('Cache-Control', 'no-store');
    res.json(await vendor.live(s, accountId, symbols));
  } catch (err) {
    res.status(502).json({ error: (err as Error).message });
  }
}
