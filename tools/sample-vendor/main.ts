/**
 * `npm run sample-vendor`: the sample vendor app on http://localhost:3000, configured by
 * environment variables. The defaults are the all-in-one mode's demo vendor app, so after
 * `npm start` it works as it is: open http://localhost:3000 and connect as a demo user.
 *
 * SAMPLE_VENDOR_PROFILE=fapi2 switches to the FAPI 2.0 client (PAR, private_key_jwt, DPoP, OpenID
 * Connect). Its signing key lives in SAMPLE_VENDOR_KEY_FILE (made on first start); the app prints
 * its public JWKS (also at /jwks.json) for the operator to register with
 * `npm run admin -- apps promote … --token-endpoint-auth-method private_key_jwt --jwks-file <file>`.
 * `npm run sample-vendor -- --print-jwks` prints that JWKS alone and exits.
 *
 * Webhooks: the app registers `${SAMPLE_VENDOR_PUBLIC_URL}/webhooks` at start (default: the redirect
 * URI's origin), and shows what arrives there at /webhooks. SAMPLE_VENDOR_WEBHOOKS=on|off; on by
 * default when that URL is this machine (localhost, 127.0.0.1, [::1]), which only DEV may call.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultPlatformDataDir } from '@trading/config';
import { createSampleVendorApp, type SampleVendorConfig } from './app';
import { loadOrCreateClientKey } from './oauth';
import { registerWebhookEndpoint, WebhookInbox } from './webhook-routes';

const env = (name: string, fallback: string) => process.env[name] || fallback;
const list = (value: string) => value.split(/[\s,]+/).filter(Boolean);
const LOCAL = /^(localhost|127\.0\.0\.1|\[::1\])$/;
const dataDir = () => process.env['PLATFORM_DATA_DIR'] || defaultPlatformDataDir();

/** The demo vendor app's secret, random per data directory: `npm start` keeps it in demo-credentials.json there. */
function demoClientSecret(): string {
  const file = join(dataDir(), 'demo-credentials.json');
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { clientSecret: string }).clientSecret;
  } catch {
    console.error(`No SAMPLE_VENDOR_CLIENT_SECRET, and no demo credentials in ${file}: run npm start first, or set it.`);
    return process.exit(1);
  }
}

async function main() {
  const profile = env('SAMPLE_VENDOR_PROFILE', 'plain');
  if (profile !== 'plain' && profile !== 'fapi2') throw new Error(`SAMPLE_VENDOR_PROFILE must be plain or fapi2, not ${profile}`);
  const fapi = profile === 'fapi2';
  const keyFile = env('SAMPLE_VENDOR_KEY_FILE', join(dataDir(), 'sample-vendor-key.json'));
  const clientKey = fapi || process.argv.includes('--print-jwks') ? await loadOrCreateClientKey(keyFile) : undefined;
  const jwks = clientKey && JSON.stringify({ keys: [clientKey.publicJwk] }, null, 2);
  if (process.argv.includes('--print-jwks')) return void console.log(jwks);

  const port = Number(env('SAMPLE_VENDOR_PORT', '3000'));
  const redirectUri = env('SAMPLE_VENDOR_REDIRECT_URI', `http://localhost:${port}/callback`);
  // Where the platform reaches this app: by default the origin its redirect URI names.
  const publicUrl = env('SAMPLE_VENDOR_PUBLIC_URL', new URL(redirectUri).origin).replace(/\/+$/, '');
  const config: SampleVendorConfig = {
    profile,
    clientId: env('SAMPLE_VENDOR_CLIENT_ID', 'tci_dev_demo00000000000000'),
    clientSecret: fapi ? undefined : process.env['SAMPLE_VENDOR_CLIENT_SECRET'] || demoClientSecret(),
    clientKey,
    redirectUri,
    loginUrl: env('SAMPLE_VENDOR_LOGIN_URL', 'http://localhost:8081').replace(/\/+$/, ''),
    apiUrl: env('SAMPLE_VENDOR_API_URL', 'http://localhost:8080/v1').replace(/\/+$/, ''),
    // OpenID Connect's scopes come first in the FAPI profile: the ID token names the user.
    scopes: list(
      env('SAMPLE_VENDOR_SCOPES', `${fapi ? 'openid profile email ' : ''}read:accounts read:banking read:orders read:market write:orders`),
    ),
    // Unset: the sign-in speaks the browser's language (Accept-Language), as the login origin's own pages do.
    locale: process.env['SAMPLE_VENDOR_LOCALE'] || undefined,
    watchlist: list(env('SAMPLE_VENDOR_WATCHLIST', 'AAPL,MSFT')),
    liveIntervalMs: Number(env('SAMPLE_VENDOR_LIVE_INTERVAL_MS', '2000')),
    publicUrl,
    // On by default for this machine, which a DEV platform may call over http; elsewhere say so.
    webhooks: env('SAMPLE_VENDOR_WEBHOOKS', LOCAL.test(new URL(publicUrl).hostname) ? 'on' : 'off') === 'on',
  };

  const inbox = new WebhookInbox();
  createSampleVendorApp(config, inbox).listen(port, () => {
    if (jwks)
      console.log(
        `Client key ${keyFile}; its public JWKS (also at http://localhost:${port}/jwks.json), to register with ` +
          `apps promote --token-endpoint-auth-method private_key_jwt --jwks-file <this saved as a file>:\n${jwks}`,
      );
    console.log(
      `Sample vendor app on http://localhost:${port} (profile ${profile}, client ${config.clientId}, login ${config.loginUrl}, API ${config.apiUrl}, scopes ${config.scopes.join(',')})`,
    );
    // Once listening, so the first event finds the receiver up.
    void registerWebhookEndpoint(config, inbox);
  });
}

main().catch((err) => {
  console.error((err as Error).message);
  process.exit(1);
});
