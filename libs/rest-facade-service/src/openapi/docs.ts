import express, { Router, type Response } from 'express';
import { pageHeadersWith, widenedPolicy } from '@trading/service';
import { openApiDocument } from './openapi';
import { asyncApiDocument } from '../asyncapi/asyncapi';

/** Swagger UI's page that hands the OAuth authorization code back to the docs (served from the package). */
export const DOCS_OAUTH_REDIRECT_PATH = '/docs/assets/oauth2-redirect.html';

export interface DocsOptions {
  /** {base_url}, absolute (FACADE_PUBLIC_URL's first): the served document's `servers` and OAuth URLs. */
  publicUrl: string;
  /** A DEV client id the Authorize dialog starts with (the all-in-one's demo app), for the authorization code flow with PKCE. */
  oauthClientId?: string;
}

/** The document as this deployment serves it: its own absolute {base_url} instead of the template. */
function servedDocument(publicUrl: string) {
  const base = publicUrl.replace(/\/+$/, '');
  const oauth2 = openApiDocument.components.securitySchemes.oauth2;
  return {
    ...openApiDocument,
    servers: [{ url: base, description: 'This deployment' }],
    components: {
      ...openApiDocument.components,
      securitySchemes: {
        ...openApiDocument.components.securitySchemes,
        oauth2: {
          ...oauth2,
          flows: {
            authorizationCode: {
              ...oauth2.flows.authorizationCode,
              authorizationUrl: `${base}/oauth/authorize`,
              tokenUrl: `${base}/oauth/token`,
              refreshUrl: `${base}/oauth/token`,
            },
          },
        },
      },
    },
  };
}

/**
 * `/v1/openapi.json` (and `/v1/asyncapi.json`) and interactive docs at `/docs` (Swagger UI, served from the package,
 * offline-safe). Its Authorize dialog takes a PAT session (see the patSession scheme) or signs in
 * with the authorization code flow and PKCE (S256) as `oauthClientId`, whose redirect URI must be
 * this facade's DOCS_OAUTH_REDIRECT_PATH.
 */
export function docsRouter(basePath: string, options: DocsOptions): Router {
  const router = Router();
  const assets: string = require('swagger-ui-dist').getAbsoluteFSPath();
  const document = JSON.stringify(servedDocument(options.publicUrl));
  const settings = JSON.stringify({
    url: `${basePath}/openapi.json`,
    redirectPath: DOCS_OAUTH_REDIRECT_PATH,
    clientId: options.oauthClientId ?? null,
  });
  const script = initScript(settings);
  router.get(`${basePath}/openapi.json`, (_req, res) => {
    res.type('application/json').send(document);
  });
  // The event streams and webhooks (AsyncAPI 3.0), public like the OpenAPI document; it changes only with a release.
  const asyncApi = JSON.stringify(asyncApiDocument(options.publicUrl));
  router.get(`${basePath}/asyncapi.json`, (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type('application/json').send(asyncApi);
  });
  const headers = pageHeadersWith(docsPolicy(options.publicUrl));
  const page = docsPage(options.publicUrl);
  router.get('/docs', headers, (_req, res) => {
    res.type('html').send(page);
  });
  router.get('/docs/init.js', headers, (_req, res) => {
    res.type('application/javascript').send(script);
  });
  // Swagger UI's files and its OAuth redirect page (a page too): the same headers, kept a day.
  const cached = (res: Response) => res.setHeader('Cache-Control', 'public, max-age=86400');
  router.use('/docs/assets', headers, express.static(assets, { index: false, setHeaders: cached }));
  return router;
}

/**
 * The page policy of every page we serve, with what Swagger UI needs besides: its stylesheet's
 * icons are data: URLs, and "Try it out" and the token exchange call {base_url}, which may be
 * another origin than the one the docs are read on. Its script and style are our own files
 * (no inline code).
 */
const docsPolicy = (publicUrl: string) => widenedPolicy({ 'img-src': ['data:'], 'connect-src': [new URL(publicUrl).origin] });

/** Runs in the page: Swagger UI, and the OAuth client its Authorize dialog starts with (PKCE, S256). */
const initScript = (settings: string) => `(function (settings) {
  window.ui = SwaggerUIBundle({
    url: settings.url,
    dom_id: '#docs',
    deepLinking: true,
    oauth2RedirectUrl: window.location.origin + settings.redirectPath,
    // No badge from swagger.io's online validator: it would send our document's address there.
    validatorUrl: null,
  });
  if (settings.clientId)
    window.ui.initOAuth({ clientId: settings.clientId, usePkceWithAuthorizationCodeGrant: true, appName: 'Trading API docs' });
})(${settings});
`;

/** Text for HTML: the five characters that could end an element or attribute, as character references. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const docsPage = (publicUrl: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Trading API docs</title><link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body>
<section id="docs-auth" class="swagger-ui"><div class="wrapper">
<h2>Trying the API here</h2>
<p>Press <b>Authorize</b> and use one of:</p>
<ul>
<li><b>patSession</b> (your own scripts): exchange your personal access token first:
<code>curl -X POST ${escapeHtml(publicUrl.replace(/\/+$/, ''))}/pat/login -H 'content-type: application/json' -d '{"token":"tpat_…"}'</code>,
then paste the <code>token</code> it returns (a session JWT, not the PAT itself).</li>
<li><b>oauth2</b> (a vendor app): the authorization code flow with PKCE. The client id is filled in where this server has a demo app
(<code>npm start</code>: the secret is in <code>demo-credentials.json</code> in its data directory); pick the scopes, sign in and consent.</li>
</ul>
</div></section>
<div id="docs"></div><script src="/docs/assets/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body>
</html>`;
