// Imported first by traced-platform.ts: tracing must start before http, express, pg and redis are loaded.
import { tracing } from '@opentelemetry/sdk-node';
import { startTracing } from '@trading/tracing/sdk';

/** Every finished span of this process, kept in memory for the test to read. */
export const spans = new tracing.InMemorySpanExporter();

startTracing({ serviceName: 'trading-platform', spanProcessors: [new tracing.SimpleSpanProcessor(spans)] });
