/**
 * The demo world of the all-in-one mode, in one place so every service's slice agrees on ids.
 * Passwords here are for a local sandbox only.
 */
export const DEMO_USERS = [
  {
    id: '6f1c2a52-0d7e-4c55-9a57-3a1f4d0c0a01',
    email: 'alice@example.com',
    password: 'alice-demo-password',
    firstName: 'Alice',
    lastName: 'Anders',
  },
  {
    id: '6f1c2a52-0d7e-4c55-9a57-3a1f4d0c0a02',
    email: 'bob@example.com',
    password: 'bob-demo-password',
    firstName: 'Bob',
    lastName: 'Brandt',
  },
];

const [alice, bob] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[0]];

export const DEMO_ACCOUNTS = [
  { id: '0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a01', userId: alice.id, number: 'DU1000001', type: 'CASH' as const, baseCurrency: 'USD' },
  { id: '0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a02', userId: alice.id, number: 'DU1000002', type: 'MARGIN' as const, baseCurrency: 'USD' },
  { id: '0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a03', userId: bob.id, number: 'DU1000003', type: 'CASH' as const, baseCurrency: 'EUR' },
];

export const DEMO_POSITIONS = [
  { accountId: DEMO_ACCOUNTS[1]!.id, symbol: 'AAPL', quantity: '10', averageCost: '172.35', currency: 'USD' },
  { accountId: DEMO_ACCOUNTS[1]!.id, symbol: 'MSFT', quantity: '5', averageCost: '402.10', currency: 'USD' },
  { accountId: DEMO_ACCOUNTS[2]!.id, symbol: 'SAP', quantity: '12', averageCost: '181.40', currency: 'EUR' },
];

export const DEMO_DEPOSITS = [
  { accountId: DEMO_ACCOUNTS[0]!.id, currency: 'USD', amount: '10000.00' },
  { accountId: DEMO_ACCOUNTS[1]!.id, currency: 'USD', amount: '25000.00' },
  { accountId: DEMO_ACCOUNTS[2]!.id, currency: 'EUR', amount: '5000.00' },
];

export const DEMO_INSTRUMENTS = [
  {
    symbol: 'AAPL',
    name: 'Apple Inc.',
    currency: 'USD',
    tickSize: '0.01',
    lotSize: '1',
    lastPrice: '189.84',
    previousClose: '187.44',
    tradable: true,
  },
  {
    symbol: 'MSFT',
    name: 'Microsoft Corporation',
    currency: 'USD',
    tickSize: '0.01',
    lotSize: '1',
    lastPrice: '415.26',
    previousClose: '417.02',
    tradable: true,
  },
  {
    symbol: 'TSLA',
    name: 'Tesla, Inc.',
    currency: 'USD',
    tickSize: '0.01',
    lotSize: '1',
    lastPrice: '248.50',
    previousClose: '244.19',
    tradable: true,
  },
  {
    symbol: 'SPY',
    name: 'SPDR S&P 500 ETF Trust',
    currency: 'USD',
    tickSize: '0.01',
    lotSize: '1',
    lastPrice: '521.13',
    previousClose: '519.67',
    tradable: true,
  },
  {
    symbol: 'SAP',
    name: 'SAP SE',
    currency: 'EUR',
    tickSize: '0.02',
    lotSize: '1',
    lastPrice: '183.60',
    previousClose: '182.14',
    tradable: true,
  },
  {
    symbol: 'VOD',
    name: 'Vodafone Group plc',
    currency: 'GBP',
    tickSize: '0.0002',
    lotSize: '1',
    lastPrice: '0.7124',
    previousClose: '0.7138',
    tradable: true,
  },
];

/**
 * US dollars per unit of each currency (USD is 1 by construction): every currency banking
 * accepts has a rate, so any balance can be valued in any base currency.
 */
export const DEMO_FX_RATES = [
  { currency: 'EUR', usdRate: '1.0823' },
  { currency: 'GBP', usdRate: '1.2671' },
  { currency: 'CHF', usdRate: '1.1275' },
  { currency: 'JPY', usdRate: '0.006652' },
  { currency: 'CAD', usdRate: '0.7318' },
  { currency: 'AUD', usdRate: '0.6594' },
  { currency: 'HKD', usdRate: '0.1281' },
  { currency: 'SGD', usdRate: '0.7422' },
  { currency: 'SEK', usdRate: '0.0947' },
  { currency: 'NOK', usdRate: '0.0921' },
  { currency: 'DKK', usdRate: '0.1451' },
];

/**
 * The all-in-one mode's DEV vendor app, for `npm run sample-vendor` (whose default client id is
 * this one). Its secret is random per data directory, in `<PLATFORM_DATA_DIR>/demo-credentials.json`:
 * a secret published here would open the app on every machine that runs the demo.
 */
export const DEMO_VENDOR_APP = {
  clientId: 'tci_dev_demo00000000000000',
  registration: {
    companyName: 'Sample Vendor Ltd',
    companyWebsite: 'https://vendor.example',
    businessEmail: 'dev-team@vendor.example',
    country: 'GB',
    appName: 'Sample Portfolio Viewer',
    description: 'The sample vendor app of the Trading API (tools/sample-vendor).',
    logoUrl: 'http://localhost:3000/logo.svg',
    homepageUrl: 'http://localhost:3000/',
    supportEmail: 'support@vendor.example',
    privacyPolicyUrl: 'https://vendor.example/privacy',
    termsOfServiceUrl: 'https://vendor.example/terms',
    redirectUris: ['http://localhost:3000/callback', 'http://127.0.0.1:3000/callback'],
    // write:orders: the sample vendor's bracket-order form works with the only app a newcomer has.
    scopes: ['read:accounts', 'read:banking', 'read:orders', 'write:orders'],
  },
};
