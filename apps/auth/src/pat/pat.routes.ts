import express, { Router } from 'express';
import type { PatService } from './pat.service';

/** Public PAT endpoints, reached through the facade at `{base_url}/pat/*`. */
export function patRoutes(pats: PatService): Router {
  const router = Router();
  router.post('/pat/login', express.json({ limit: '4kb' }), async (req, res) => {
    const result = await pats.login((req.body as { token?: unknown } | undefined)?.token, req.ip);
    res.setHeader('Cache-Control', 'no-store');
    res.json(result);
  });
  return router;
}
