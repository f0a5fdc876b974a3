/**
 * The process's tracing, flushed at the end of a graceful shutdown. Kept apart from the SDK so
 * the code that shuts down (every service) does not load the SDK when tracing is off.
 */
let flush: (() => Promise<void>) | undefined;

export function onShutdown(fn: () => Promise<void>): void {
  flush = fn;
}

/** Flushes and stops this process's tracing, if it was started. */
export async function shutdownTracing(): Promise<void> {
  const fn = flush;
  flush = undefined;
  await fn?.();
}
