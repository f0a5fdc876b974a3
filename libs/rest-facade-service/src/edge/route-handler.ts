import express, { Router, type RequestHandler } from 'express';
import { missingScopes } from '@trading/auth';
import { errors } from '@trading/errors';
import type { ApiLimits } from '@trading/rate-limit';
import type { RestRoute } from '../routes/route';
import type { GatewayClient } from './gateway-client';

/** The JSON body of a route-table call: at most 64 KB. */
const json = express.json({ limit: '64kb' });

/**
 * Reads a route-table call's JSON body as the request arrives, before the token check's round
 * trips. A client that writes a whole placement and hangs up at once (a timeout) then gets the
 * order carried out, as when it hangs up a moment later, and finds it by its clientOrderId: Node
 * drops a request whose body is still unread when the connection ends, which would make the
 * outcome depend on how fast the edge checked the token. Auth's paths are passed on unread.
 */
export function readBodyFirst(): RequestHandler {
  return (req, res, next) => (/^\/(oauth|pat)(\/|$)/i.test(req.path) ? next() : json(req, res, next));
}

/** Mounts the route table: order budget, scope check, variables, one gateway call, response shaping. */
export function routeTableRouter(routes: RestRoute[], gateway: GatewayClient, limits: ApiLimits): Router {
  const router = Router();
  for (const route of routes) {
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
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
