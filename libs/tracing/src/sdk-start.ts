/** The OpenTelemetry SDK with the platform's instrumentations: loaded by sdk.ts only when tracing is asked for. */
import type { IncomingMessage } from 'node:http';
import { api, core, NodeSDK, type tracing } from '@opentelemetry/sdk-node';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { GraphQLInstrumentation } from '@opentelemetry/instrumentation-graphql';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { RedisInstrumentation } from '@opentelemetry/instrumentation-redis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { traceContextUntrusted } from './trust-boundary';

/** A W3C traceparent (version 00): its trace id. */
const CALLER_TRACEPARENT = /^00-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** Probes and scrapes: no trace for them, they would drown the ones that matter. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * W3C trace context and baggage, except from a request that came in on a public listener
 * (trust-boundary.ts): its span starts a trace of its own, whatever the caller sent.
 */
class TrustedTraceContext implements api.TextMapPropagator {
  private readonly w3c = new core.CompositePropagator({
    propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()],
  });
  /** The headers of requests from outside, seen by the HTTP instrumentation just before it extracts from them. */
  readonly untrusted = new WeakSet<object>();

  inject(context: api.Context, carrier: unknown, setter: api.TextMapSetter): void {
    this.w3c.inject(context, carrier, setter);
  }

  extract(context: api.Context, carrier: unknown, getter: api.TextMapGetter): api.Context {
    if (carrier && typeof carrier === 'object' && this.untrusted.has(carrier)) return context;
    return this.w3c.extract(context, carrier, getter);
  }

  fields(): string[] {
    return this.w3c.fields();
  }
}

/** Starts the SDK: HTTP in and out, Express, GraphQL, PostgreSQL, Redis, undici; the exporter from OTEL_* unless `spanProcessors` are given. */
export function startSdk(serviceName: string, spanProcessors?: tracing.SpanProcessor[]): NodeSDK {
  const propagator = new TrustedTraceContext();
  const sdk = new NodeSDK({
    serviceName,
    // Not OTEL_PROPAGATORS: the platform speaks W3C trace context and baggage, and takes them only from its own services.
    textMapPropagator: propagator,
    ...(spanProcessors ? { spanProcessors } : {}),
    // Traces only: metrics are Prometheus's (/metrics), logs are pino's on stdout.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req: IncomingMessage) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]!),
        // Runs just before the instrumentation extracts the caller's context from these headers.
        startIncomingSpanHook: (req: IncomingMessage) => {
          if (!traceContextUntrusted(req)) return {};
          propagator.untrusted.add(req.headers);
          // The caller's own trace id, well-formed only, as a searchable attribute: support can find
          // our trace from the id a vendor quotes, without the vendor choosing ours.
          const callerTraceId = CALLER_TRACEPARENT.exec(String(req.headers['traceparent'] ?? ''))?.[1];
          return {
            'trading.trace_context': 'not taken from a public caller',
            ...(callerTraceId ? { 'trading.caller_trace_id': callerTraceId } : {}),
          };
        },
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
