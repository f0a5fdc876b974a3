/** Listening, draining and the process's run loop (signals, config errors). */
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import { ConfigError, STOP_DEADLINE_MS } from '@trading/config';
import { createLogger, type Logger } from '@trading/logging';
import { distrustTraceContext, shutdownTracing } from '@trading/tracing';
import { requestListenerFor } from './direct-graphql';
import type { LevelWithSilent } from 'pino';

export interface RunningServer {
  server: Server;
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Any address, IPv4 or IPv6: bound to every interface. */
const WILDCARD_ADDRESS = /^(?:0\.0\.0\.0|::)$/;

/** A URL one can call a listener at: a wildcard bind is called on loopback, an IPv6 address in brackets. */
function callableUrl(host: string, port: number): string {
  if (WILDCARD_ADDRESS.test(host)) return `http://127.0.0.1:${port}`;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Listens on `port` (0 = any free port) and returns a closer that drains connections.
 * `publicCallers`: callers outside the platform, whose trace context is not taken (libs/tracing).
 */
export function listen(app: Express, port: number, host = '127.0.0.1', options: { publicCallers?: boolean } = {}): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = createServer(requestListenerFor(app));
    if (options.publicCallers) distrustTraceContext(server);
    server.listen(port, host);
    server.keepAliveTimeout = 65_000; // longer than typical proxies' idle timeouts
    server.once('error', reject);
    server.once('listening', () => {
      const actual = (server.address() as AddressInfo).port;
      resolve({
        server,
        port: actual,
        url: callableUrl(host, actual),
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

interface ListenAddress {
  port: number;
  host: string;
}

export interface ServicePlan {
  listen: { public: ListenAddress; internal: ListenAddress; admin?: ListenAddress };
  logLevel: LevelWithSilent;
  create(logger: Logger): Promise<ServiceApp>;
  /** Default STOP_DEADLINE_MS. */
  stopDeadlineMs?: number;
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
  const open = async (app: Express, at: ListenAddress, publicCallers = false) => {
    const server = await listen(app, at.port, at.host, { publicCallers });
    opened.push(server);
    return server;
  };
  try {
    const running: RunningService = {
      public: await open(service.app, plan.public, true),
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
    const { listen: addresses, logLevel, create, stopDeadlineMs = STOP_DEADLINE_MS } = plan();
    logger = createLogger(name, logLevel);
    const service = await create(logger);
    const running = await listenService(service, addresses);
    logger.info({ port: running.public.port, internalPort: running.internal.port, adminPort: running.admin?.port }, `${name} listening`);
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger?.info({ signal }, `${name} shutting down`);
      setTimeout(() => {
        logger?.error({ deadlineMs: stopDeadlineMs }, `${name} did not stop within its deadline; exiting anyway`);
        process.exit(1);
      }, stopDeadlineMs);
      let status = 0;
      try {
        await running.close();
        await service.close();
      } catch (err) {
        logger?.error({ err }, `${name} failed to release everything while stopping`);
        status = 1;
      }
      await shutdownTracing().catch((err) => logger?.warn({ err }, 'flushing traces failed'));
      process.exit(status);
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
