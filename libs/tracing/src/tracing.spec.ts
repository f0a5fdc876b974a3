import { trace } from '@opentelemetry/api';
import { node, tracing } from '@opentelemetry/sdk-node';
import { currentTraceparent, inSpan } from './trace-context';
import { onShutdown, shutdownTracing } from './shutdown';
import { tracingRequested } from './sdk';

describe('tracingRequested: off unless the standard variables ask for it', () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_TRACES_EXPORTER: 'console' }, true],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
    [{ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
  ])('%j → %s', (env, expected) => {
    expect(tracingRequested(env)).toBe(expected);
  });
});

describe('trace context beside an event', () => {
  const spans = new tracing.InMemorySpanExporter();
  const provider = new node.NodeTracerProvider({ spanProcessors: [new tracing.SimpleSpanProcessor(spans)] });
  beforeAll(() => provider.register());
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
  });

  it('is absent outside a trace, and a consumer span continues the producer trace from its traceparent', async () => {
    expect(currentTraceparent()).toBeUndefined();
    let carried: string | undefined;
    await inSpan('oms fill', {}, async () => {
      carried = currentTraceparent();
    });
    expect(carried).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    // Later, in another process: the consumer applies the event under the producer's trace.
    await inSpan('banking apply trade.executed', { traceparent: carried, kind: 'consumer' }, async () => undefined);
    const [fill, apply] = spans.getFinishedSpans();
    expect(apply!.spanContext().traceId).toBe(fill!.spanContext().traceId);
    expect(apply!.parentSpanContext?.spanId).toBe(fill!.spanContext().spanId);
  });

  it('records a failure on the span and rethrows it', async () => {
    spans.reset();
    await expect(inSpan('fails', {}, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(spans.getFinishedSpans()[0]!.status.code).toBe(2); // ERROR
  });
});

describe('shutdownTracing', () => {
  it('flushes what was registered, once', async () => {
    let flushed = 0;
    onShutdown(async () => void flushed++);
    await shutdownTracing();
    await shutdownTracing();
    expect(flushed).toBe(1);
  });

  it('gives up after its timeout when the flush never ends (a collector that does not answer)', async () => {
    onShutdown(() => new Promise<void>(() => undefined));
    await expect(shutdownTracing(200)).rejects.toThrow('traces not flushed within 200 ms');
  });
});
