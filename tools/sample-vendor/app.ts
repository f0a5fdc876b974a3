/**
 * A minimal vendor backend doing the whole authorization code flow with PKCE against the Trading API, written
 * to be read: PKCE verifier and challenge, redirect to the login page, callback with a state
 * check, code exchange, API calls, and a refresh when the access token has expired (the new
 * refresh token replaces the old one). No framework beyond Express, no OAuth library: every step
 * is visible in ./connection-routes.ts, ./vendor-client.ts and ./oauth.ts.
 *
 * Two profiles (SAMPLE_VENDOR_PROFILE):
 *  - plain: authorization code + PKCE, the client secret in the token request, Bearer tokens.
 *  - fapi2: the FAPI 2.0 Security Profile's client side: the authorization request pushed first
 *    (PAR, RFC 9126), private_key_jwt client authentication (RFC 7523), DPoP-bound tokens with a
 *    proof on every call (RFC 9449), and OpenID Connect sign-in (an ID token verified with the
 *    server's JWKS, its nonce checked).
 *
 * What a vendor's dashboard shows: the user's accounts, balances, positions with their value,
 * live quotes and orders (the page asks this backend for them every few seconds; no token ever
 * reaches the browser), and forms that place a bracket order and a market order with an
 * Idempotency-Key; each filled order shows the price it filled at beside the bid and ask the app
 * last saw when it placed it. A working order can be filled in part through the DEV sandbox, and the
 * events the platform sends (order.partially_filled…) arrive at its webhook receiver. API calls go through the client generated from the API's OpenAPI
 * document (@trading/api-client's types), so they are typed end to end.
 *
 * Where each part is: ./connection-routes.ts (connecting and disconnecting), ./dashboard-routes.ts
 * (the dashboard and its live data), ./order-routes.ts (the order forms), ./file-routes.ts
 * (stylesheet, script, logo, JWKS, a debug view), ./webhook-routes.ts (registering a webhook endpoint,
 * receiving and showing its events), ./pages.ts (the HTML), ./vendor-client.ts (the
 * session, tokens and API client) and ./oauth.ts (each OAuth step).
 */
import express, { type RequestHandler } from 'express';
import { connectionRoutes } from './connection-routes';
import { dashboardRoutes } from './dashboard-routes';
import { fileRoutes } from './file-routes';
import { orderRoutes } from './order-routes';
import { VendorClient, type SampleVendorConfig } from './vendor-client';
import { WebhookInbox, webhookRoutes } from './webhook-routes';

export type { SampleVendorConfig } from './vendor-client';

/** The page may load its own stylesheet, script and images, and send forms to itself: nothing else. */
const CSP =
  "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  next();
};

/** `inbox`: where the webhook receiver keeps verified events; main.ts registers the endpoint and hands it the secret. */
export function createSampleVendorApp(config: SampleVendorConfig, inbox = new WebhookInbox()): express.Express {
  const vendor = new VendorClient(config);
  const app = express();
  app.disable('x-powered-by');
  app.use(express.urlencoded({ extended: false, limit: '10kb' }));
  app.use(securityHeaders);
  fileRoutes(app, vendor);
  connectionRoutes(app, vendor);
  dashboardRoutes(app, vendor);
  orderRoutes(app, vendor);
  webhookRoutes(app, vendor, inbox);
  return app;
}
