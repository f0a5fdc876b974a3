import { createLogger } from '@trading/logging';
import { MemoryStore } from '@trading/redis';
import { listenService, type RunningService, type ServiceApp } from '@trading/service';
import { testKeys } from '@trading/testing';
import { createGatewayApp, explorerEnabled, loadGatewayConfig } from '../app';
import explorerAssets from './explorer-assets.generated.json';

const { script: EXPLORER_SCRIPT, style: EXPLORER_STYLE } = explorerAssets;

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** The bundled GraphQL explorer at GET /graphql (in a browser): served with a strict CSP when on, absent when off. */
describe('GraphQL explorer', () => {
  const keys = testKeys();
  const running: Array<{ app: ServiceApp; server: RunningService }> = [];

  async function gateway(env: Record<string, string>): Promise<string> {
    const config = loadGatewayConfig({
      ...keys.env('gateway'),
      ACCOUNTS_URL: 'http://127.0.0.1:9/graphql',
      BANKING_URL: 'http://127.0.0.1:9/graphql',
      OMS_URL: 'http://127.0.0.1:9/graphql',
      AUTH_JWKS_URL: 'http://127.0.0.1:9/.well-known/jwks.json',
      ...env,
    });
    const app = await createGatewayApp(config, { logger: createLogger('gateway', 'silent'), store: new MemoryStore() });
    const server = await listenService(app, { public: { port: 0, host: '127.0.0.1' }, internal: { port: 0, host: '127.0.0.1' } });
    running.push({ app, server });
    return server.public.url;
  }
  afterAll(async () => {
    for (const { app, server } of running) {
      await server.close();
      await app.close();
    }
  });

  it('is on by default outside production, off by default with NODE_ENV=production, and as GATEWAY_EXPLORER says otherwise', () => {
    expect(explorerEnabled({ GATEWAY_EXPLORER: undefined }, { NODE_ENV: 'development' })).toBe(true);
    expect(explorerEnabled({ GATEWAY_EXPLORER: undefined }, {})).toBe(true);
    expect(explorerEnabled({ GATEWAY_EXPLORER: undefined }, { NODE_ENV: 'production' })).toBe(false);
    expect(explorerEnabled({ GATEWAY_EXPLORER: true }, { NODE_ENV: 'production' })).toBe(true);
    expect(explorerEnabled({ GATEWAY_EXPLORER: false }, { NODE_ENV: 'development' })).toBe(false);
    expect(loadGatewayConfig({ ...keys.env('gateway'), GATEWAY_EXPLORER: 'false' }).GATEWAY_EXPLORER).toBe(false);
  });

  it('serves the page and its bundle to a browser, with a CSP that allows only this origin, and nothing from a CDN', async () => {
    const url = await gateway({ GATEWAY_EXPLORER: 'true' });
    const page = await fetch(`${url}/graphql`, { headers: { accept: BROWSER_ACCEPT } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/https?:|\*/);
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>|<style>|\son\w+=/); // no inline code for the CSP to allow

    const script = html.match(/<script src="([^"]+)"/)![1]!;
    const style = html.match(/<link rel="stylesheet" href="([^"]+)"/)![1]!;
    const js = await fetch(`${url}${script}`);
    expect(js.headers.get('content-type')).toMatch(/^application\/javascript/);
    expect(await js.text()).toBe(EXPLORER_SCRIPT);
    const css = await fetch(`${url}${style}`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await css.text()).toBe(EXPLORER_STYLE);
    // Fonts and icons are inlined: the stylesheet names no other server.
    expect(EXPLORER_STYLE).not.toMatch(/url\(\s*["']?(https?:)?\/\//);
    // Within a reasonable size (GraphiQL 4 with CodeMirror, React 19; minified).
    expect(EXPLORER_SCRIPT.length + EXPLORER_STYLE.length).toBeLessThan(2.5 * 1024 * 1024);

    // A GraphQL client's GET is not the page, and a POST still needs a token.
    const get = await fetch(`${url}/graphql?query=%7B__typename%7D`, { headers: { accept: 'application/json' } });
    expect(get.headers.get('content-type')).toMatch(/json/);
    const post = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(post.status).toBe(401);
  });

  it("is absent when off: a browser gets no page (and never Apollo's CDN landing page)", async () => {
    const url = await gateway({ GATEWAY_EXPLORER: 'false' });
    const page = await fetch(`${url}/graphql`, { headers: { accept: BROWSER_ACCEPT } });
    expect(page.status).toBeGreaterThanOrEqual(400);
    const body = await page.text();
    expect(body).not.toMatch(/apollographql\.com|embeddable-sandbox|<html/i);
    expect((await fetch(`${url}/graphql/explorer/explorer.js`)).status).toBeGreaterThanOrEqual(400);
  });
});
