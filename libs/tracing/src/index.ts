// The SDK itself is `@trading/tracing/sdk`: only a process's entry point loads it.
export { shutdownTracing } from './shutdown';
export { currentTraceparent, inSpan } from './trace-context';
export { distrustTraceContext } from './trust-boundary';
