import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { pinoHttp } from 'pino-http';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { AppError, PROBLEM_CONTENT_TYPE, problem, problemFromError, wwwAuthenticate } from '@trading/errors';
import { ConfigError } from '@trading/config';
import { createLogger, httpLogSerializers, REQUEST_ID_HEADER, requestIdFrom, runWithRequestId, type Logger } from '@trading/logging';
import type { LevelWithSilent } from 'pino';

export type ReadinessCheck = () => Promise<void>;

export interface ServiceOptions {
  name: string;
  logger: Logger;
  /** Named dependency checks for /readyz (database, redis, …). */
  readiness?: Record<string, ReadinessCheck>;
  /** Express `trust proxy`: which peers may set X-Forwarded-For (DESIGN §4). */
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
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by listener, route and status',
    labelNames: ['listener', 'method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [metrics],
  });
  const readiness = async () => {
    const checks: Record<string, string> = {};
    let ready = true;
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
    res.setHeader('Content-Type', metrics.contentType);
    res.send(await metrics.metrics());
  });
  return { app, internal, metrics };
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
  app.use(
    pinoHttp({
      logger: options.logger,
      genReqId: (req) => (req as Request).requestId,
      // Method, path, status and ids only: no cookies, tokens, Set-Cookie or Location (codes) in the access log.
      serializers: httpLogSerializers,
      autoLogging: { ignore: (req) => ['/healthz', '/readyz', '/metrics'].includes(req.url ?? '') },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    }),
  );
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', service: options.name });
  });
  return app;
}

/** Sends an error as problem+json (with WWW-Authenticate on 401 and scope 403s). */
export function sendProblem(res: Response, err: unknown, requestId: string | undefined): void {
  const body = problemFromError(err, requestId);
  if (err instanceof AppError) {
    const challenge = wwwAuthenticate(err);
    if (challenge) res.setHeader('WWW-Authenticate', challenge);
  }
  res.status(body.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
}

/** 404 for unknown paths and one error handler that never leaks internals. */
export function finishService(app: Express, logger: Logger): void {
  app.use((req, res) => {
    res
      .status(404)
      .type(PROBLEM_CONTENT_TYPE)
      .send(JSON.stringify(problem('NOT_FOUND', `No route for ${req.method} ${req.path}`, { requestId: req.requestId })));
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const parseError = err as { type?: string; status?: number };
    if (parseError?.type === 'entity.parse.failed') return sendProblem(res, new AppError('BAD_USER_INPUT', 'The request body is not valid JSON', { field: 'body' }), req.requestId);
    if (parseError?.type === 'entity.too.large') return sendProblem(res, new AppError('BAD_USER_INPUT', 'The request body is too large', { field: 'body' }), req.requestId);
    if (!(err instanceof AppError)) logger.error({ err, requestId: req.requestId }, 'unhandled error');
    sendProblem(res, err, req.requestId);
  });
}

export interface RunningServer {
  server: Server;
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Listens on `port` (0 = any free port) and returns a closer that drains connections. */
export function listen(app: Express, port: number, host = '127.0.0.1'): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.keepAliveTimeout = 65_000; // longer than typical proxies' idle timeouts
    server.once('error', reject);
    server.once('listening', () => {
      const actual = (server.address() as AddressInfo).port;
      resolve({
        server,
        port: actual,
        url: `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:${actual}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeIdleConnections();
            setTimeout(() => server.closeAllConnections(), 2000).unref();
          }),
      });
    });
  });
}

/** What every app factory returns: its listeners' apps, ready to listen, and how to release its resources. */
export interface ServiceApp {
  name: string;
  /** Public listener. */
  app: Express;
  /** Internal listener (internal claims, metrics, internal APIs). */
  internal: Express;
  /** The admin API's own listener, where the service has one (auth). */
  admin?: Express;
  close(): Promise<void>;
}

export interface ListenAddress {
  port: number;
  host: string;
}

export interface ServicePlan {
  listen: { public: ListenAddress; internal: ListenAddress; admin?: ListenAddress };
  logLevel: LevelWithSilent;
  create(logger: Logger): Promise<ServiceApp>;
}

export interface RunningService {
  public: RunningServer;
  internal: RunningServer;
  admin?: RunningServer;
  close(): Promise<void>;
}

/** Listens on every listener a service has; closes what it opened if one fails. */
export async function listenService(service: ServiceApp, plan: ServicePlan['listen']): Promise<RunningService> {
  const opened: RunningServer[] = [];
  const open = async (app: Express, at: ListenAddress) => {
    const server = await listen(app, at.port, at.host);
    opened.push(server);
    return server;
  };
  try {
    const running: RunningService = {
      public: await open(service.app, plan.public),
      internal: await open(service.internal, plan.internal),
      close: async () => {
        await Promise.all(opened.map((s) => s.close()));
      },
    };
    if (service.admin) {
      if (!plan.admin) throw new Error(`${service.name} has an admin API but no admin listener was configured`);
      running.admin = await open(service.admin, plan.admin);
    }
    return running;
  } catch (err) {
    await Promise.all(opened.map((s) => s.close()));
    throw err;
  }
}

/**
 * The body of every app's `main.ts`: read config (a bad value stops start-up with a readable
 * list), build the app, listen, and on SIGINT/SIGTERM stop taking connections, drain, release
 * resources and exit.
 */
export async function runService(name: string, plan: () => ServicePlan): Promise<void> {
  let logger: Logger | undefined;
  try {
    const { listen: addresses, logLevel, create } = plan();
    logger = createLogger(name, logLevel);
    const service = await create(logger);
    const running = await listenService(service, addresses);
    logger.info({ port: running.public.port, internalPort: running.internal.port, adminPort: running.admin?.port }, `${name} listening`);
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger?.info({ signal }, `${name} shutting down`);
      await running.close();
      await service.close();
      process.exit(0);
    };
    process.on('SIGINT', () => void stop('SIGINT'));
    process.on('SIGTERM', () => void stop('SIGTERM'));
  } catch (err) {
    if (err instanceof ConfigError) console.error(err.message);
    else if (logger) logger.fatal({ err }, `${name} failed to start`);
    else console.error(err);
    process.exit(1);
  }
}
export { startPeriodic, type PeriodicTask } from './periodic';
export { Lifecycle } from './lifecycle';
