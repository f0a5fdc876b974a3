/**
 * `npm run sample-vendor`: the sample vendor app on http://localhost:3000, configured by
 * environment variables. The defaults are the all-in-one mode's demo vendor app, so after
 * `npm start` it works as it is: open http://localhost:3000 and connect as a demo user.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultPlatformDataDir } from '@trading/config';
import { createSampleVendorApp } from './app';

const env = (name: string, fallback: string) => process.env[name] || fallback;

/** The demo vendor app's secret, random per data directory: `npm start` keeps it in demo-credentials.json there. */
function demoClientSecret(): string {
  const file = join(process.env['PLATFORM_DATA_DIR'] || defaultPlatformDataDir(), 'demo-credentials.json');
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { clientSecret: string }).clientSecret;
  } catch {
    console.error(`No SAMPLE_VENDOR_CLIENT_SECRET, and no demo credentials in ${file}: run npm start first, or set it.`);
    return process.exit(1);
  }
}
const port = Number(env('SAMPLE_VENDOR_PORT', '3000'));
const config = {
  clientId: env('SAMPLE_VENDOR_CLIENT_ID', 'tci_dev_demo00000000000000'),
  clientSecret: process.env['SAMPLE_VENDOR_CLIENT_SECRET'] || demoClientSecret(),
  redirectUri: env('SAMPLE_VENDOR_REDIRECT_URI', `http://localhost:${port}/callback`),
  loginUrl: env('SAMPLE_VENDOR_LOGIN_URL', 'http://localhost:8081').replace(/\/+$/, ''),
  apiUrl: env('SAMPLE_VENDOR_API_URL', 'http://localhost:8080/v1').replace(/\/+$/, ''),
  scopes: env('SAMPLE_VENDOR_SCOPES', 'read:accounts')
    .split(/[\s,]+/)
    .filter(Boolean),
  locale: env('SAMPLE_VENDOR_LOCALE', 'en'),
};

createSampleVendorApp(config).listen(port, () => {
  console.log(
    `Sample vendor app on http://localhost:${port} (client ${config.clientId}, login ${config.loginUrl}, API ${config.apiUrl}, scopes ${config.scopes.join(',')})`,
  );
});
