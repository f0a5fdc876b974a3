import { createHash } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import explorerAssets from './explorer-assets.generated.json';

const { script: EXPLORER_SCRIPT, style: EXPLORER_STYLE } = explorerAssets;

/** Where the explorer's script and style are served (under /graphql, so an ingress routing /graphql serves them too). */
const EXPLORER_ASSETS_PATH = '/graphql/explorer';

/**
 * Only the gateway's own origin: the page, its script and style, and POST /graphql. Fonts and
 * GraphiQL's icons are data: URLs in the bundle. Inline styles are allowed because GraphiQL and
 * CodeMirror position their panes and pop-ups with style attributes; no inline script is.
 */
const EXPLORER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const version = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 16);
const scriptVersion = version(EXPLORER_SCRIPT);
const styleVersion = version(EXPLORER_STYLE);

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Trading API · GraphQL explorer</title>
<link rel="stylesheet" href="${EXPLORER_ASSETS_PATH}/explorer.css?v=${styleVersion}">
</head>
<body>
<noscript>The GraphQL explorer needs JavaScript.</noscript>
<div id="explorer" data-endpoint="/graphql"></div>
<script src="${EXPLORER_ASSETS_PATH}/explorer.js?v=${scriptVersion}"></script>
</body>
</html>
`;

function pageHeaders(res: Response): void {
  res.set({
    'content-security-policy': EXPLORER_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  });
}

/** A browser asking for a page (not a GraphQL GET, which asks for JSON). */
const wantsPage = (req: Request) => req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) === 'text/html';

/**
 * The GraphQL explorer (GraphiQL, bundled: ./browser/explorer.ts) for internal front-end
 * developers: GET /graphql from a browser, and its two assets. Mounted only when GATEWAY_EXPLORER
 * is on; every operation it sends is a normal POST /graphql with the bearer token typed in.
 */
export function explorerRouter(): Router {
  const router = Router();
  router.get('/graphql', (req, res, next) => {
    if (!wantsPage(req) || Object.keys(req.query).length) return next();
    pageHeaders(res);
    res.set('cache-control', 'no-store').type('html').send(PAGE);
  });
  const asset = (type: string, body: string) => (_req: Request, res: Response) => {
    pageHeaders(res);
    res.set('cache-control', 'public, max-age=86400').type(type).send(body);
  };
  router.get(`${EXPLORER_ASSETS_PATH}/explorer.js`, asset('application/javascript', EXPLORER_SCRIPT));
  router.get(`${EXPLORER_ASSETS_PATH}/explorer.css`, asset('text/css', EXPLORER_STYLE));
  return router;
}
