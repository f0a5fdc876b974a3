import { Router } from 'express';
import type { TokenSigner } from '../keys/token-signer';

/**
 * Access-token signing keys (`npm run admin -- keys list|rotate|retire`):
 *   GET  /admin/keys              every key, newest first, with its status
 *   POST /admin/keys/rotate       a new key signs from now on; the old one stays published
 *   POST /admin/keys/:kid/retire  stops publishing a key (not the active one)
 */
export function adminKeyRoutes(signer: TokenSigner): Router {
  const router = Router();
  router.get('/admin/keys', async (_req, res) => {
    res.json({ keys: await signer.list() });
  });
  router.post('/admin/keys/rotate', async (_req, res) => {
    res.status(201).json(await signer.rotate());
  });
  router.post('/admin/keys/:kid/retire', async (req, res) => {
    res.json(await signer.retire(String(req.params['kid'])));
  });
  return router;
}
