/**
 * Where the platform's trust ends for trace context. A caller of a public listener (a vendor app,
 * a browser, anyone) may send `traceparent`, `tracestate` and `baggage`: taken as they come, they
 * would let the caller choose the trace id our spans are filed under and force sampling (every
 * request of theirs traced, whatever the ratio). So a public listener starts a trace of its own;
 * internal listeners, whose callers are our own services, carry the trace on.
 */
import type { IncomingMessage, Server } from 'node:http';

/** On the listener's server; a global symbol, so bundles that each hold a copy of this module agree. */
const UNTRUSTED = Symbol.for('trading.untrusted-trace-context');

/** Marks a listener whose callers are outside the platform: their trace context is not taken. */
export function distrustTraceContext(server: Server): void {
  (server as unknown as Record<symbol, boolean>)[UNTRUSTED] = true;
}

/** True when the request came in on a listener marked by distrustTraceContext. */
export function traceContextUntrusted(req: IncomingMessage): boolean {
  const server = (req.socket as unknown as { server?: Record<symbol, boolean> } | undefined)?.server;
  return !!server?.[UNTRUSTED];
}
