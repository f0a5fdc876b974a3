import express, { Router } from 'express';
import { openApiDocument } from './openapi';

/** `/v1/openapi.json` and interactive docs at `/docs` (Swagger UI, served from the package, offline-safe). */
export function docsRouter(basePath: string): Router {
  const router = Router();
  const assets: string = require('swagger-ui-dist').getAbsoluteFSPath();
  const document = JSON.stringify(openApiDocument);
  router.get(`${basePath}/openapi.json`, (_req, res) => {
    res.type('application/json').send(document);
  });
  router.get('/docs', (_req, res) => {
    res.type('html').send(DOCS_PAGE);
  });
  router.get('/docs/init.js', (_req, res) => {
    res
      .type('application/javascript')
      .send(`window.ui = SwaggerUIBundle({ url: '${basePath}/openapi.json', dom_id: '#docs', deepLinking: true });`);
  });
  router.use('/docs/assets', express.static(assets, { index: false, maxAge: '1d' }));
  return router;
}

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Trading API docs</title><link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="docs"></div><script src="/docs/assets/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body>
</html>`;
