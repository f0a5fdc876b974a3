import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import pino, { type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

/** The header that carries one request's id across facade → gateway → subgraph. */
export const REQUEST_ID_HEADER = 'x-request-id';

const requestContext = new AsyncLocalStorage<{ requestId: string }>();

export function createLogger(service: string, level: LevelWithSilent = 'info'): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Every line written while a request is in flight carries its id, without threading it by hand.
    mixin: () => {
      const ctx = requestContext.getStore();
      return ctx ? { requestId: ctx.requestId } : {};
    },
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-internal-claims"]'], censor: '[redacted]' },
  });
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
