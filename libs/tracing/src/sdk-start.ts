/** The OpenTelemetry SDK with the platform's instrumentations: loaded by sdk.ts only when tracing is asked for. */
import type { IncomingMessage } from 'node:http';
import { NodeSDK, type tracing } from '@opentelemetry/sdk-node';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { GraphQLInstrumentation } from '@opentelemetry/instrumentation-graphql';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { RedisInstrumentation } from '@opentelemetry/instrumentation-redis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';

/** Probes and scrapes: no trace for them, they would drown the ones that matter. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** Starts the SDK: HTTP in and out, Express, GraphQL, PostgreSQL, Redis, undici; the exporter from OTEL_* unless `spanProcessors` are given. */
export function startSdk(serviceName: string, spanProcessors?: tracing.SpanProcessor[]): NodeSDK {
  const sdk = new NodeSDK({
    serviceName,
    ...(spanProcessors ? { spanProcessors } : {}),
    // Traces only: metrics are Prometheus's (/metrics), logs are pino's on stdout.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req: IncomingMessage) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]!),
      }),
      // Routers and handlers, not every middleware: a request's trace shows where it went, not 15 spans of plumbing.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      // One span per operation, not per field: the platform's resolvers are thin.
      new GraphQLInstrumentation({ ignoreTrivialResolveSpans: true, mergeItems: true, depth: 2 }),
      new PgInstrumentation({ requireParentSpan: true }),
      new RedisInstrumentation({ requireParentSpan: true }),
      new UndiciInstrumentation(),
    ],
  });
  sdk.start();
  return sdk;
}
