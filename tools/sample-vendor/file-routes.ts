/**
 * What the app serves that is not a page: its stylesheet, script and logo, the public half of
 * its signing key (fapi2), and a debug view of the visitor's session.
 */
import { join } from 'node:path';
import type express from 'express';
import { LOGO } from './pages';
import type { VendorClient } from './vendor-client';

export function fileRoutes(app: express.Express, vendor: VendorClient): void {
  const config = vendor.config;
  app.get('/logo.svg', (_req, res) => void res.type('image/svg+xml').send(LOGO));
  app.get('/style.css', (_req, res) => res.sendFile(join(__dirname, 'public/style.css')));
  app.get('/live.js', (_req, res) => res.sendFile(join(__dirname, 'public/live.js')));

  // fapi2: the public half of the app's signing key, for the operator to register (`apps promote --jwks-file`).
  app.get('/jwks.json', (_req, res) => {
    if (!config.clientKey) return void res.status(404).json({ error: 'not_found' });
    res.json({ keys: [config.clientKey.publicJwk] });
  });

  // What this session holds, without any secret: handy when trying the profiles (and for the tests).
  app.get('/debug/session', (req, res) => {
    const s = vendor.session(req, res);
    res.json({
      profile: vendor.profile,
      connected: !!s.tokens,
      tokenType: s.tokens?.tokenType ?? null,
      lastAuthScheme: s.lastAuthScheme ?? null,
      dpopThumbprint: s.dpop?.thumbprint ?? null,
      dpopNonceRetries: s.dpop?.nonceRetries ?? 0,
      scope: s.tokens?.scope ?? null,
      refreshes: s.refreshes,
      idTokenSubject: s.user?.sub ?? null,
    });
  });
}
