import { Router } from 'express';
import { pageHeaders } from '@trading/service';
import { escapeHtml } from './docs';
import { openApiDocument } from './openapi';

/** Where a newcomer at {base_url} goes next: the docs, the document, and the two ways to a token. */
interface ApiIndexLinks {
  docs: string;
  openapi: string;
  patLogin: string;
  oauthAuthorize: string;
  oauthToken: string;
}

/** The index's links for {base_url} `publicUrl`, absolute; the docs live beside `basePath` on the same origin. */
function apiIndexLinks(publicUrl: string, basePath: string): ApiIndexLinks {
  const base = publicUrl.replace(/\/+$/, '');
  const root = base.endsWith(basePath) ? base.slice(0, -basePath.length) : new URL(base).origin;
  return {
    docs: `${root}/docs`,
    openapi: `${base}/openapi.json`,
    patLogin: `${base}/pat/login`,
    oauthAuthorize: `${base}/oauth/authorize`,
    oauthToken: `${base}/oauth/token`,
  };
}

/**
 * `GET {base_url}` (`/v1` and `/v1/`), before any token is asked for: JSON `{ name, version, links }`
 * for a program, a short page of the same links for a browser (Accept: text/html first), so the
 * address the banner and the docs call {base_url} opens something.
 */
export function apiIndexRouter(basePath: string, publicUrl: string): Router {
  const links = apiIndexLinks(publicUrl, basePath);
  const index = { name: openApiDocument.info.title, version: openApiDocument.info.version, links };
  const a = (href: string, text: string) => `<a href="${escapeHtml(href)}">${escapeHtml(text)}</a>`;
  const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(index.name)}</title></head>
<body>
<main id="api-index">
<h1>${escapeHtml(index.name)} ${escapeHtml(index.version)}</h1>
<p>This is {base_url}: every API path is under it, and every call but the two token requests below needs <code>Authorization: Bearer &lt;token&gt;</code>.</p>
<ul>
<li>${a(links.docs, 'API documentation')}: every endpoint, to read and try in the browser</li>
<li>${a(links.openapi, 'OpenAPI 3.1 document')}: for code generators and API tools</li>
<li>Your own scripts: exchange a personal access token at <code>POST ${escapeHtml(links.patLogin)}</code></li>
<li>Vendor apps: OAuth 2.0 authorization code with PKCE, from <code>${escapeHtml(links.oauthAuthorize)}</code> to <code>POST ${escapeHtml(links.oauthToken)}</code></li>
</ul>
</main>
</body>
</html>`;
  return Router().get(basePath, (req, res) => {
    res.vary('Accept');
    if (req.accepts(['application/json', 'text/html']) !== 'text/html') return void res.json(index);
    pageHeaders(req, res, () => res.type('html').send(page));
  });
}
