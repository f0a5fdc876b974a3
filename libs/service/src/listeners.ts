/** A service's public and internal listeners: request ids, metrics, access log, health and readiness, internal headers dropped in public. */
import express, { type Express } from 'express';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { REQUEST_ID_HEADER, requestIdFrom, runWithRequestId, type Logger } from '@trading/logging';
import { accessLog } from './access-log';
import { serveGraphQLDirectly } from './direct-graphql';
import { serveGraphQL, type GraphQLEndpoint } from './graphql-endpoint';

type ReadinessCheck = () => Promise<void>;

/** What holds the whole process back from ready, whatever its dependencies say (see holdReadiness). */
const readinessHolds = new Set<string>();

/**
 * Every listener of this process answers /readyz 503 (naming `reason` on internal listeners)
 * until the returned function is called: a worker of the all-in-one is not ready until every
 * worker is, so a caller never mistakes a platform still starting for one that is up.
 */
export function holdReadiness(reason: string): () => void {
  readinessHolds.add(reason);
  return () => void readinessHolds.delete(reason);
}

/**
 * How a process that shares its ports with others (the all-in-one's workers: connections go to
 * each in turn) answers /metrics: every process's share combined, so consecutive scrapes never
 * see one process's counters, then another's. Without it a scrape is this process's registry.
 */
export interface SharedMetrics {
  /** A service of this process made its registry (one per service). */
  add(service: string, registry: Registry): void;
  /** What a scrape of `service` answers. */
  scrape(service: string): Promise<string>;
}
let sharedMetrics: SharedMetrics | undefined;

/** Set before any service is created (see SharedMetrics). */
export function shareMetricsWith(shared: SharedMetrics): void {
  sharedMetrics = shared;
}

export interface ServiceOptions {
  name: string;
  logger: Logger;
  /** Named dependency checks for /readyz (database, redis, …). */
  readiness?: Record<string, ReadinessCheck>;
  /** Express `trust proxy`: which peers may set X-Forwarded-For (the header is believed from these alone, so IP restrictions see the real client address). */
  trustProxy?: string[];
}

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
  }
}

/**
 * Headers only services set for each other (the internal claims header and any other
 * `x-internal-*`): a public listener removes them before any route sees the request.
 */
const INTERNAL_HEADER_PREFIX = 'x-internal-';

/** The listeners of one service: what outside callers may reach, and what only the platform's own services may. */
export interface ServiceListeners {
  /** Public: only what outside callers need, plus /healthz and a /readyz that names no dependency. */
  app: Express;
  /** Internal: internal claims, /metrics, a detailed /readyz, internal APIs. Never exposed outside the platform's network. */
  internal: Express;
  metrics: Registry;
  /**
   * Serves `endpoint` at POST /graphql on the internal listener: directly for a JSON POST, through
   * Express (the same answer, slower) for anything else and for callers of the app itself.
   */
  serveInternalGraphQL(endpoint: GraphQLEndpoint, options: { limitBytes: number }): void;
}

/**
 * Express apps with what every service needs before its own routes: request ids carried in
 * `x-request-id`, structured request logs, /healthz, /readyz, /metrics (internal only). Add
 * routes, then call `finishService` on each to install the 404 and problem+json error handlers.
 */
export function createService(options: ServiceOptions): ServiceListeners {
  const metrics = new Registry();
  metrics.setDefaultLabels({ service: options.name });
  collectDefaultMetrics({ register: metrics });
  sharedMetrics?.add(options.name, metrics);
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by listener, route and status',
    labelNames: ['listener', 'method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [metrics],
  });
  const readiness = async () => {
    const checks: Record<string, string> = {};
    let ready = readinessHolds.size === 0;
    if (!ready) checks['process'] = [...readinessHolds].join('; ');
    for (const [name, check] of Object.entries(options.readiness ?? {})) {
      try {
        await check();
        checks[name] = 'ok';
      } catch {
        checks[name] = 'unavailable';
        ready = false;
      }
    }
    return { ready, checks };
  };

  const app = baseApp(options, 'public', duration);
  app.use((req, _res, next) => {
    for (const header of Object.keys(req.headers)) if (header.startsWith(INTERNAL_HEADER_PREFIX)) delete req.headers[header];
    next();
  });
  app.get('/readyz', async (_req, res) => {
    const { ready } = await readiness();
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready' });
  });

  // Peers on the internal network are services, not proxies: their X-Forwarded-For means nothing.
  const internal = baseApp({ ...options, trustProxy: undefined }, 'internal', duration);
  internal.get('/readyz', async (_req, res) => {
    const { ready, checks } = await readiness();
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', service: options.name, checks });
  });
  internal.get('/metrics', async (_req, res) => {
    const text = sharedMetrics ? await sharedMetrics.scrape(options.name) : await metrics.metrics();
    res.setHeader('Content-Type', metrics.contentType);
    res.send(text);
  });
  const serveInternalGraphQL = (endpoint: GraphQLEndpoint, { limitBytes }: { limitBytes: number }) => {
    internal.use('/graphql', express.json({ limit: limitBytes }), serveGraphQL(endpoint));
    serveGraphQLDirectly(internal, { endpoint, limitBytes, logger: options.logger, duration });
  };
  return { app, internal, metrics, serveInternalGraphQL };
}

/** Request ids, duration metrics, the access log and /healthz: the same on every listener. */
export function baseApp(options: ServiceOptions, listener: string, duration?: Histogram): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', options.trustProxy?.length ? options.trustProxy : false);
  app.use((req, res, next) => {
    const requestId = requestIdFrom(req.headers[REQUEST_ID_HEADER]);
    req.requestId = requestId;
    req.headers[REQUEST_ID_HEADER] = requestId;
    res.setHeader(REQUEST_ID_HEADER, requestId);
    const stop = duration?.startTimer();
    if (stop) {
      res.on('finish', () => {
        // Label by route pattern, not raw path, so ids do not explode the metric's cardinality.
        const route = (req.route?.path as string | undefined) ?? (res.statusCode === 404 ? 'unmatched' : req.baseUrl || 'other');
        stop({ listener, method: req.method, route, status: String(res.statusCode) });
      });
    }
    runWithRequestId(requestId, next);
  });
  app.use(accessLog(options.logger, listener === 'internal' ? 'internal' : 'public'));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', service: options.name });
  });
  return app;
}
