/**
 * W3C trace context where no HTTP header carries it: a settlement event waits in the OMS's
 * outbox and travels on a Redis stream, so its `traceparent` is stored and sent with it, and
 * the consumer that applies it continues the same trace.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';

const tracer = trace.getTracer('@trading/tracing');

/** The active trace as a `traceparent` value, or undefined when nothing is traced. */
export function currentTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier['traceparent'];
}

/**
 * Runs `fn` in a span named `name` whose parent is the trace `traceparent` names (a remote
 * parent), or a new trace when there is none. Without a tracing SDK this costs a no-op span.
 */
export async function inSpan<T>(
  name: string,
  options: { traceparent?: string | null; kind?: 'consumer' | 'producer' | 'internal'; attributes?: Attributes },
  fn: () => Promise<T>,
): Promise<T> {
  const parent = options.traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent: options.traceparent }) : context.active();
  const kind = options.kind === 'consumer' ? SpanKind.CONSUMER : options.kind === 'producer' ? SpanKind.PRODUCER : SpanKind.INTERNAL;
  return tracer.startActiveSpan(name, { kind, attributes: options.attributes }, parent, async (span) => {
    try {
      return await fn();
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}
