import { Router, type Request, type Response } from 'express';
import type { DataSource } from '@trading/db';
import { AppError } from '@trading/errors';
import { WEBHOOK_EVENTS } from '@trading/webhooks';
import { authenticateClient, type Params } from '../oauth/client-auth';
import type { ClientLimits } from '../oauth/client-limits';
import type { OAuthContext } from '../oauth/context';
import { OAuthError } from '../oauth/errors';
import type { Client } from '../registry/registry.service';
import { ENVIRONMENTS, type Environment } from '../registry/vendor-apps';
import type { WebhookDeliveries } from './webhook-deliveries';
import type { WebhookEndpoints } from './webhook-endpoints';

const CLIENT_AUTH_PARAMS = ['client_id', 'client_secret', 'client_assertion', 'client_assertion_type'];

/**
 * The app's own credentials, as at the token endpoint: HTTP Basic with its secret, or a
 * private_key_jwt assertion (in the JSON body; on a GET, in the query). Failures count against
 * the same limits, and answer 401 problem+json here.
 */
async function vendorClient(oauth: OAuthContext, limits: ClientLimits, req: Request, res: Response): Promise<Client> {
  const source: Record<string, unknown> =
    req.method === 'GET' || req.method === 'DELETE' ? (req.query as Record<string, unknown>) : req.is('application/json') ? req.body : {};
  const params: Params = {};
  for (const name of CLIENT_AUTH_PARAMS) if (typeof source?.[name] === 'string') params[name] = source[name] as string;
  try {
    return await authenticateClient(oauth, req, res, params, limits);
  } catch (err) {
    if (!(err instanceof OAuthError)) throw err;
    if (err.status === 429) throw new AppError('RATE_LIMITED', err.description);
    throw new AppError(err.status === 401 || err.error === 'invalid_client' ? 'UNAUTHENTICATED' : 'FORBIDDEN', err.description, {
      challenge: 'Basic realm="trading-api webhooks"',
    });
  }
}

/** The body's fields, without the client credentials a private_key_jwt app may send in it. */
function bodyOf(req: Request): Record<string, unknown> {
  if (!req.is('application/json')) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json');
  const body = req.body as unknown;
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new AppError('BAD_USER_INPUT', 'The body must be a JSON object');
  return Object.fromEntries(Object.entries(body).filter(([k]) => !CLIENT_AUTH_PARAMS.includes(k)));
}

/**
 * `/webhooks/*`: an app manages its endpoints in the environment its credentials are for, and
 * reads and replays its delivery log. Nothing here acts for a user: the app speaks for itself.
 */
export function webhookRoutes(
  oauth: OAuthContext,
  limits: ClientLimits,
  endpoints: WebhookEndpoints,
  deliveries: WebhookDeliveries,
): Router {
  const router = Router();
  const asClient = (handler: (client: Client, req: Request, res: Response) => Promise<void>) => async (req: Request, res: Response) => {
    res.set('cache-control', 'no-store');
    await handler(await vendorClient(oauth, limits, req, res), req, res);
  };
  router.get('/webhooks/event-types', (_req, res) => {
    res.json({ eventTypes: Object.entries(WEBHOOK_EVENTS).map(([type, { scope, description }]) => ({ type, scope, description })) });
  });
  router.get(
    '/webhooks/endpoints',
    asClient(async (client, _req, res) => void res.json({ endpoints: await endpoints.list(client.clientId) })),
  );
  router.post(
    '/webhooks/endpoints',
    asClient(async (client, req, res) => void res.status(201).json(await endpoints.create(client, bodyOf(req)))),
  );
  router.patch(
    '/webhooks/endpoints/:endpointId',
    asClient(async (client, req, res) => void res.json(await endpoints.update(client, req.params['endpointId'], bodyOf(req)))),
  );
  router.delete(
    '/webhooks/endpoints/:endpointId',
    asClient(async (client, req, res) => {
      await endpoints.remove(client.clientId, req.params['endpointId']);
      res.status(204).end();
    }),
  );
  router.post(
    '/webhooks/endpoints/:endpointId/rotate-secret',
    asClient(async (client, req, res) => void res.json(await endpoints.rotateSecret(client.clientId, req.params['endpointId']))),
  );
  router.get(
    '/webhooks/deliveries',
    asClient(async (client, req, res) => {
      const q = req.query as Record<string, unknown>;
      const page = await deliveries.list(client.clientId, q);
      res.json({ deliveries: page.nodes, nextCursor: page.nextCursor });
    }),
  );
  router.post(
    '/webhooks/deliveries/:deliveryId/redeliver',
    asClient(async (client, req, res) => void res.status(202).json(await deliveries.redeliver(client.clientId, req.params['deliveryId']))),
  );
  return router;
}

/** The client id of an app's environment, the app named by its id or any of its client ids. */
async function clientOf(db: DataSource, ref: string, environment: unknown): Promise<{ clientId: string; environment: Environment }> {
  if (!ENVIRONMENTS.includes(environment as Environment))
    throw new AppError('BAD_USER_INPUT', `environment must be one of ${ENVIRONMENTS.join(', ')}`, { field: 'environment' });
  const [row]: Array<{ client_id: string }> = await db.query(
    `SELECT c.client_id FROM vendor_app_credentials c
      WHERE c.environment = $2 AND c.app_id = (SELECT app_id FROM vendor_app_credentials WHERE client_id = $1
                                                UNION SELECT id FROM vendor_apps WHERE id::text = $1 LIMIT 1)`,
    [ref, environment],
  );
  if (!row) throw new AppError('NOT_FOUND', `The app "${ref.slice(0, 80)}" has no ${String(environment)} credentials`, { field: 'app' });
  return { clientId: row.client_id, environment: environment as Environment };
}

/**
 * The service team's side (`npm run admin -- apps webhooks …`): the same endpoints, for any app
 * and environment, e.g. to register a vendor's first endpoint or turn one off during an incident.
 */
export function adminWebhookRoutes(db: DataSource, endpoints: WebhookEndpoints, deliveries: WebhookDeliveries): Router {
  const router = Router();
  const env = (req: Request) => (req.method === 'GET' ? req.query['environment'] : (req.body as Record<string, unknown>)?.['environment']);
  const target = (req: Request) => clientOf(db, req.params['app'] as string, env(req));
  router.get('/admin/apps/:app/webhooks', async (req, res) => {
    const { clientId } = await target(req);
    res.json({ endpoints: await endpoints.list(clientId) });
  });
  router.post('/admin/apps/:app/webhooks', async (req, res) => {
    res.status(201).json(await endpoints.create(await target(req), req.body as Record<string, unknown>));
  });
  router.post('/admin/apps/:app/webhooks/:endpointId', async (req, res) => {
    res.json(await endpoints.update(await target(req), req.params['endpointId'], req.body as Record<string, unknown>));
  });
  router.post('/admin/apps/:app/webhooks/:endpointId/rotate-secret', async (req, res) => {
    res.json(await endpoints.rotateSecret((await target(req)).clientId, req.params['endpointId']));
  });
  router.post('/admin/apps/:app/webhooks/:endpointId/remove', async (req, res) => {
    await endpoints.remove((await target(req)).clientId, req.params['endpointId']);
    res.json({ removed: req.params['endpointId'] });
  });
  router.get('/admin/apps/:app/webhook-deliveries', async (req, res) => {
    const page = await deliveries.list((await target(req)).clientId, req.query as Record<string, unknown>);
    res.json({ deliveries: page.nodes, nextCursor: page.nextCursor });
  });
  return router;
}
