import { spawnSync } from 'node:child_process';
import { createLogger } from '@trading/logging';
import { MemoryStore } from '@trading/redis';
import { listen } from '@trading/service';
import { http, openApiResponseValidator, testKeys } from '@trading/testing';
import { createRestFacadeApp, loadFacadeConfig } from '../app';
import { DOCS_OAUTH_REDIRECT_PATH } from './docs';
import { openApiDocument } from './openapi';

/** The types openapi-typescript (the generated client's tool; Redocly validates underneath) makes of a document, in a child Node (it is ESM). */
function clientTypes(document: unknown): string {
  const script = `import openapiTS, { astToString } from 'openapi-typescript';
let input = '';
for await (const chunk of process.stdin) input += chunk;
process.stdout.write(astToString(await openapiTS(JSON.parse(input))));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { input: JSON.stringify(document), encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`openapi-typescript refused the document: ${run.stderr}`);
  return run.stdout;
}

/** The served document and Swagger UI's set-up: this deployment's absolute {base_url}, the PAT exchange, OAuth with PKCE. */
describe('API docs (served document and Swagger UI)', () => {
  async function facade(env: Record<string, string>) {
    const app = await createRestFacadeApp(loadFacadeConfig({ ...testKeys().env('rest-facade'), ...env }), {
      logger: createLogger('f', 'silent'),
      store: new MemoryStore(),
    });
    const server = await listen(app.app, 0, '127.0.0.1');
    return {
      url: server.url,
      close: async () => {
        await server.close();
        await app.close();
      },
    };
  }

  it('the committed document names {base_url} as a server variable, never a relative /v1', () => {
    expect(openApiDocument.servers).toEqual([
      {
        url: '{base_url}',
        description: expect.any(String),
        variables: { base_url: { default: 'http://localhost:8080/v1', description: expect.any(String) } },
      },
    ]);
    expect(openApiDocument.components.securitySchemes.patSession.description).toMatch(/POST \/pat\/login[\s\S]*paste the returned `token`/);
  });

  it("serves the document with this deployment's absolute {base_url}, still valid and still a client's source", async () => {
    const f = await facade({ FACADE_PUBLIC_URL: 'https://api.trading.example/v1' });
    try {
      const { status, body } = await http('GET', `${f.url}/v1/openapi.json`);
      expect(status).toBe(200);
      expect(body.servers).toEqual([{ url: 'https://api.trading.example/v1', description: 'This deployment' }]);
      expect(body.components.securitySchemes.oauth2.flows.authorizationCode).toMatchObject({
        authorizationUrl: 'https://api.trading.example/v1/oauth/authorize',
        tokenUrl: 'https://api.trading.example/v1/oauth/token',
        refreshUrl: 'https://api.trading.example/v1/oauth/token',
      });
      // Everything else is the committed document (libs/api-client/openapi.json).
      const { servers: _s, components, ...rest } = body;
      const { servers: _t, components: committedComponents, ...committedRest } = JSON.parse(JSON.stringify(openApiDocument));
      expect(rest).toEqual(committedRest);
      expect({ ...components, securitySchemes: undefined }).toEqual({ ...committedComponents, securitySchemes: undefined });
      // Valid: openapi-typescript (the generated client's tool, Redocly underneath) reads it, and its schemas compile.
      const types = clientTypes(body);
      expect(types).toContain('pendingIn: string;');
      expect(() => openApiResponseValidator(body)).not.toThrow();
    } finally {
      await f.close();
    }
  });

  it("answers {base_url} itself with an index of this deployment's links, JSON or a page, without a token", async () => {
    const f = await facade({ FACADE_PUBLIC_URL: 'https://api.trading.example/v1' });
    try {
      const index = await http('GET', `${f.url}/v1/`);
      expect([index.status, index.body.links]).toEqual([
        200,
        {
          docs: 'https://api.trading.example/docs',
          openapi: 'https://api.trading.example/v1/openapi.json',
          patLogin: 'https://api.trading.example/v1/pat/login',
          oauthAuthorize: 'https://api.trading.example/v1/oauth/authorize',
          oauthToken: 'https://api.trading.example/v1/oauth/token',
        },
      ]);
      const page = await fetch(`${f.url}/v1`, { headers: { accept: 'text/html' } });
      expect([page.status, page.headers.get('x-frame-options')]).toEqual([200, 'DENY']);
      const body = await page.text();
      expect(body).toContain('href="https://api.trading.example/docs"');
      expect(body).toContain('href="https://api.trading.example/v1/openapi.json"');
      expect(body).not.toMatch(/<script|<style| style=/); // nothing the page policy would refuse
    } finally {
      await f.close();
    }
  });

  it('sets up the Authorize dialog for the authorization code flow with PKCE when a docs client is configured, and explains the PAT exchange', async () => {
    const f = await facade({ FACADE_PUBLIC_URL: 'http://localhost:3000/v1', DOCS_OAUTH_CLIENT_ID: 'tci_dev_demo00000000000000' });
    try {
      const init = await http('GET', `${f.url}/docs/init.js`);
      expect(init.status).toBe(200);
      expect(init.body).toContain('usePkceWithAuthorizationCodeGrant: true');
      expect(init.body).toContain('"clientId":"tci_dev_demo00000000000000"');
      expect(init.body).toContain(`"redirectPath":"${DOCS_OAUTH_REDIRECT_PATH}"`);
      const page = await http('GET', `${f.url}/docs`);
      expect(page.body).toContain('curl -X POST http://localhost:3000/v1/pat/login');
      expect(page.body).not.toMatch(/<script>(?!<)/); // no inline script
      // Swagger UI's redirect page, served from the package like the rest.
      const redirect = await http('GET', `${f.url}${DOCS_OAUTH_REDIRECT_PATH}`);
      expect(redirect.status).toBe(200);
    } finally {
      await f.close();
    }
    const plain = await facade({});
    try {
      expect((await http('GET', `${plain.url}/docs/init.js`)).body).toContain('"clientId":null');
    } finally {
      await plain.close();
    }
    expect(() => loadFacadeConfig({ ...testKeys().env('rest-facade'), DOCS_OAUTH_CLIENT_ID: 'tci_prod_x' })).toThrow(/DEV client id/);
  });

  it('serves the docs, their script and Swagger UI’s files and redirect page with the same security headers as the sign-in pages', async () => {
    const f = await facade({ FACADE_PUBLIC_URL: 'https://api.trading.example/v1' });
    try {
      for (const path of [
        '/docs',
        '/docs/init.js',
        DOCS_OAUTH_REDIRECT_PATH,
        '/docs/assets/swagger-ui-bundle.js',
        '/docs/assets/swagger-ui.css',
      ]) {
        const res = await fetch(`${f.url}${path}`);
        expect([path, res.status]).toEqual([path, 200]);
        const csp = res.headers.get('content-security-policy') ?? '';
        const directives = Object.fromEntries(csp.split(/;\s*/).map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
        expect([path, directives]).toEqual([
          path,
          expect.objectContaining({
            'default-src': "'none'",
            'script-src': "'self'",
            'style-src': "'self'",
            'img-src': "'self' data:",
            'connect-src': "'self' https://api.trading.example",
            'frame-ancestors': "'none'",
            'base-uri': "'none'",
            'form-action': "'self'",
          }),
        ]);
        expect([
          path,
          res.headers.get('x-frame-options'),
          res.headers.get('x-content-type-options'),
          res.headers.get('referrer-policy'),
        ]).toEqual([path, 'DENY', 'nosniff', 'no-referrer']);
      }
      // The page is never cached; Swagger UI's own files are, for a day.
      expect((await fetch(`${f.url}/docs`)).headers.get('cache-control')).toBe('no-store');
      expect((await fetch(`${f.url}/docs/assets/swagger-ui-bundle.js`)).headers.get('cache-control')).toBe('public, max-age=86400');
      // No badge from an outside validator: the CSP would refuse it, and it would tell swagger.io where our document is.
      expect((await http('GET', `${f.url}/docs/init.js`)).body).toContain('validatorUrl: null');
    } finally {
      await f.close();
    }
  });
});
