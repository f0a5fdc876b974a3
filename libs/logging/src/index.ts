import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { openSync } from 'node:fs';
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
function safeErr(err: unknown): unknown {
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

/** Lines wait in memory until this much is pending, or FLUSH_MS has passed: one write for many lines. */
const BUFFER_BYTES = 8 * 1024;
const FLUSH_MS = 250;

/**
 * One buffered, asynchronous stdout for every logger of the process. A write per line was 7% of
 * the facade's CPU under load (writing to a file); buffered, lines go out together, at the latest
 * FLUSH_MS after they were logged, and a slow reader of stdout (a log shipper that falls behind,
 * a full pipe) never stalls the event loop. pino flushes what is pending synchronously when the
 * process exits (also after a fatal error).
 */
function standardOutput(): DestinationStream {
  stdout ??= buffered(pino.destination({ dest: 1, sync: false, minLength: BUFFER_BYTES }));
  return stdout;
}

function buffered(destination: ReturnType<typeof pino.destination>): DestinationStream {
  setInterval(() => {
    try {
      destination.flush();
    } catch {
      /* closed at exit: pino flushed it */
    }
  }, FLUSH_MS).unref();
  return destination;
}

const LEVEL_WORDS: Record<number, string> = { 40: 'warning', 50: 'error', 60: 'fatal' };

/**
 * For a person at a terminal rather than a log collector: every logger of this process created
 * afterwards without a destination of its own writes its JSON lines to `file` (appended, 0600),
 * and each warning or error also as one plain line on standard error ("warning (platform): …"),
 * the reason of an error included. Call it before the first logger is made.
 */
export function logToFileForPeople(file: string): void {
  if (stdout) throw new Error('logToFileForPeople: loggers already write to standard output');
  // Opened here, synchronously: a destination still opening when the process exits (a refused start) cannot be flushed.
  const inFile = buffered(pino.destination({ dest: openSync(file, 'a', 0o600), sync: false, minLength: BUFFER_BYTES }));
  const onTerminal = {
    write(line: string) {
      try {
        const entry = JSON.parse(line) as { level: number; service?: string; msg?: string; err?: { message?: string } };
        const reason = entry.err?.message ? `: ${entry.err.message}` : '';
        process.stderr.write(`${LEVEL_WORDS[entry.level] ?? 'note'} (${entry.service ?? 'platform'}): ${entry.msg ?? ''}${reason}\n`);
      } catch {
        process.stderr.write(line);
      }
    },
  };
  stdout = pino.multistream([
    { level: 'trace', stream: inFile },
    { level: 'warn', stream: onTerminal },
  ]);
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
