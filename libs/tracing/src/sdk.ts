/** Starts OpenTelemetry tracing for a process, from the standard OTEL_* variables; off unless they ask for it. */
import type { tracing } from '@opentelemetry/sdk-node';
import type * as SdkStart from './sdk-start';
import { onShutdown } from './shutdown';

/**
 * True when the environment asks for traces: an OTLP endpoint, or a traces exporter other than
 * `none`; and the SDK is not disabled. Otherwise nothing is started and nothing is patched.
 */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return false;
  const exporters = env['OTEL_TRACES_EXPORTER']?.trim();
  if (exporters) return exporters !== 'none';
  return !!(env['OTEL_EXPORTER_OTLP_ENDPOINT'] || env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']);
}

export interface Tracing {
  /** Flushes what is buffered and stops exporting (on shutdown). */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** `service.name` of every span, unless OTEL_SERVICE_NAME says otherwise. */
  serviceName: string;
  env?: NodeJS.ProcessEnv;
  /** Where spans go instead of the exporter OTEL_* names (tests: an in-memory exporter). Starts tracing regardless of the environment. */
  spanProcessors?: tracing.SpanProcessor[];
}

/**
 * Starts the SDK with the instrumentations of the platform's stack (HTTP in and out, Express,
 * GraphQL, PostgreSQL, Redis, undici), before those modules are loaded: call it first thing in
 * `main`, from a module imported before any other. Exporter, endpoint, sampler and resource
 * come from the standard variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_SAMPLER, …).
 */
export function startTracing(options: TracingOptions): Tracing | undefined {
  const env = options.env ?? process.env;
  if (!options.spanProcessors && !tracingRequested(env)) return undefined;
  if (started) return started; // one SDK per process: the all-in-one's apps share it
  // Loaded only now: the SDK, its exporters and instrumentations cost ~60 MB and half a second per process.
  const { startSdk } = require('./sdk-start') as typeof SdkStart;
  const sdk = startSdk(env['OTEL_SERVICE_NAME'] || options.serviceName, options.spanProcessors);
  started = {
    shutdown: async () => {
      started = undefined;
      await sdk.shutdown();
    },
  };
  onShutdown(started.shutdown);
  return started;
}

let started: Tracing | undefined;
