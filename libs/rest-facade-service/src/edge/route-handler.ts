import express, { Router } from 'express';
import { missingScopes } from '@trading/auth';
import { errors } from '@trading/errors';
import type { ApiLimits } from '@trading/rate-limit';
import type { RestRoute } from '../routes/route';
import type { GatewayClient } from './gateway-client';

/** Mounts the route table: order budget, scope check, variables, one gateway call, response shaping. */
export function routeTableRouter(routes: RestRoute[], gateway: GatewayClient, limits: ApiLimits): Router {
  const router = Router();
  const json = express.json({ limit: '64kb' });
  for (const route of routes) {
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
    router[method](route.path, json, async (req, res) => {
      const claims = req.claims!;
      // Here, not by path: whatever spelling Express matched to this route (a trailing slash, another case) is charged.
      if (route.placesOrder) await limits.forOrders(res, claims);
      if (missingScopes(claims.scope, route.scopes).length) throw errors.insufficientScope(route.scopes);
      const variables = route.variables ? route.variables(req) : {};
      const data = await gateway.execute(route.document, variables, claims, req.requestId);
      res.status(route.status ?? 200).json(route.shape(data, req));
    });
  }
  return router;
}
