// Lists your accounts and the positions in each, with @trading/api-client and a personal access token.
//
//   npm install @trading/api-client            (or ./trading-api-client-<version>.tgz)
//   TRADING_API_URL=http://localhost:8080/v1 TRADING_PAT='tpat_….…' node portfolio.mjs
//
// A READ_ONLY token is enough. The PAT is exchanged for a session token (POST /pat/login), which
// every other call sends as `Authorization: Bearer …`.
import { createTradingClient } from '@trading/api-client';

const baseUrl = process.env.TRADING_API_URL ?? 'http://localhost:8080/v1';
const pat = process.env.TRADING_PAT;
if (!pat) {
  console.error('Set TRADING_PAT to a personal access token (dashboard → Developer → Personal access tokens).');
  process.exit(2);
}

/** Errors are application/problem+json: a stable `code`, the `field` at fault, a `requestId` to quote to support. */
function fail(what, { response, error }) {
  console.error(`${what}: HTTP ${response.status} ${error?.code ?? ''} ${error?.detail ?? ''}`.trim());
  process.exit(1);
}

const login = await createTradingClient({ baseUrl }).POST('/pat/login', { body: { token: pat } });
if (login.error) fail('PAT login failed', login);
const api = createTradingClient({ baseUrl, accessToken: login.data.token });

const accounts = await api.GET('/accounts');
if (accounts.error) fail('Listing accounts failed', accounts);
for (const account of accounts.data.accounts) {
  console.log(`account ${account.id} ${account.number} ${account.type} ${account.baseCurrency} ${account.status}`);
  let cursor;
  let count = 0;
  do {
    const page = await api.GET('/accounts/{accountId}/positions', {
      params: { path: { accountId: account.id }, query: { limit: 100, ...(cursor ? { cursor } : {}) } },
    });
    if (page.error) fail(`Listing the positions of ${account.id} failed`, page);
    for (const p of page.data.positions) {
      count++;
      console.log(
        `  ${p.symbol} ${p.quantity} @ ${p.averageCost} ${p.currency}, market value ${p.marketValue}, unrealised P&L ${p.unrealizedPnl}`,
      );
    }
    cursor = page.data.nextCursor;
  } while (cursor);
  console.log(`  ${count} position${count === 1 ? '' : 's'}`);
}
