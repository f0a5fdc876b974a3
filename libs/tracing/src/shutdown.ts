/**
 * The process's tracing, flushed at the end of a graceful shutdown. Kept apart from the SDK so
 * the code that shuts down (every service) does not load the SDK when tracing is off.
 */
let flush: (() => Promise<void>) | undefined;

export function onShutdown(fn: () => Promise<void>): void {
  flush = fn;
}

/**
 * Spans a stopping process may spend flushing: an unreachable collector (the SDK's own export
 * timeout is 10 s, 30 s per batch) must not use up the stop deadline; what is not out by then is lost.
 */
const TRACE_FLUSH_TIMEOUT_MS = 5000;

/** Flushes and stops this process's tracing, if it was started; rejects after `timeoutMs`. */
export async function shutdownTracing(timeoutMs = TRACE_FLUSH_TIMEOUT_MS): Promise<void> {
  const fn = flush;
  flush = undefined;
  if (!fn) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`traces not flushed within ${timeoutMs} ms`)), timeoutMs);
  });
  await Promise.race([fn(), late]).finally(() => clearTimeout(timer));
}
