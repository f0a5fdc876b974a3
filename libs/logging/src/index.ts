import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import pino, { type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

/** The header that carries one request's id across facade → gateway → subgraph. */
export const REQUEST_ID_HEADER = 'x-request-id';

const requestContext = new AsyncLocalStorage<{ requestId: string }>();

/**
 * Errors as pino writes them, less what may hold a customer's data or a secret: SQL parameters
 * and the driver's detail ("Key (email)=(…) already exists"). The statement and codes stay.
 */
export function safeErr(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const serialized = pino.stdSerializers.err(err as Error) as unknown as Record<string, unknown>;
  const { parameters: _p, detail: _d, driverError, ...rest } = serialized as Record<string, unknown> & { driverError?: { code?: unknown } };
  return driverError ? { ...rest, driverCode: driverError.code } : rest;
}

/** Paths whose query strings may carry credentials or one-time values (codes, states, tokens): logged without them. */
const SENSITIVE_PATH = /\/(oauth|pat|login|signin|consent|developer)(\/|$|\?)/;

/**
 * The access log's view of a request and a response: enough to follow a call (method, path,
 * status, request id, client address), never cookies, authorization, Set-Cookie or Location.
 */
export const httpLogSerializers = {
  req: (req: { id?: unknown; method?: string; url?: string; remoteAddress?: string }) => ({
    id: req.id,
    method: req.method,
    url: req.url && SENSITIVE_PATH.test(req.url) ? req.url.split('?')[0] : req.url,
    remoteAddress: req.remoteAddress,
  }),
  res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
  err: safeErr,
};

export function createLogger(service: string, level: LevelWithSilent = 'info', destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name: service,
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Every line written while a request is in flight carries its id, without threading it by hand.
    // With tracing on, it carries the trace too, so a log line leads to its trace and back.
    mixin: () => {
      const ctx = requestContext.getStore();
      const ids = ctx ? { requestId: ctx.requestId } : {};
      const span = trace.getActiveSpan()?.spanContext();
      // Only a sampled trace is one that can be looked up.
      return span && span.traceFlags & 1 ? { ...ids, traceId: span.traceId, spanId: span.spanId } : ids;
    },
    serializers: { err: safeErr },
    // Belt and braces for anything logged by hand: the serializers above already drop headers.
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-internal-claims"]',
        'req.headers["x-internal-client-address"]',
        'res.headers["set-cookie"]',
        'res.headers.location',
      ],
      censor: '[redacted]',
    },
  };
  return pino(options, destination ?? standardOutput());
}

let stdout: DestinationStream | undefined;

/**
 * One asynchronous stdout for every logger of the process: a slow reader of stdout (a log
 * shipper that falls behind, a full pipe) must not stall the event loop on every line, as
 * synchronous writes do; lines written while a write is under way go out together. pino
 * flushes it synchronously when the process exits (also after a fatal error).
 */
function standardOutput(): DestinationStream {
  stdout ??= pino.destination({ dest: 1, sync: false });
  return stdout;
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Accepts a caller's id when it is well-formed (so a client can correlate), otherwise mints one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && REQUEST_ID_PATTERN.test(value) ? value : randomUUID();
}

export function runWithRequestId<T>(requestId: string, fn: () => T): T {
  return requestContext.run({ requestId }, fn);
}

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}
