import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

interface SpanView {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  scope: string;
  attributes: Record<string, unknown>;
}

interface TracedRun {
  marginStatus: number;
  forgedStatus: number;
  forgedTraceId: string;
  orderStatus: number;
  ports: { facade: number; gatewayInternal: number; accounts: number; banking: number; oms: number };
  spans: SpanView[];
  logLines: string[];
}

const SERVER = 1; // SpanKind.SERVER

/**
 * W3C trace context across every hop. The product runs in a child process with an
 * in-memory exporter (traced-platform.ts); here we read what it recorded.
 */
describe('tracing', () => {
  let run: TracedRun;
  beforeAll(() => {
    const child = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '../support/traced-platform.ts')], {
      cwd: join(__dirname, '../../../..'),
      encoding: 'utf8',
      timeout: 110_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    if (child.status !== 0) throw new Error(`traced run failed (${child.status}): ${child.stderr.slice(-2000)}`);
    run = JSON.parse(child.stdout.trim().split('\n').pop()!) as TracedRun;
  }, 120_000);

  const port = (s: SpanView) => Number(s.attributes['server.port'] ?? s.attributes['net.host.port']);
  const path = (s: SpanView) => String(s.attributes['url.path'] ?? s.attributes['http.target'] ?? '');
  const trace = (traceId: string) => run.spans.filter((s) => s.traceId === traceId);
  const serverSpan = (method: string, pathPart: string) =>
    run.spans.find((s) => s.kind === SERVER && s.name.startsWith(method) && port(s) === run.ports.facade && path(s).includes(pathPart));

  it('one GET /v1/accounts/{id}/margin is one trace through facade, gateway, accounts, banking, the OMS (market prices), PostgreSQL and Redis', () => {
    expect(run.marginStatus).toBe(200);
    const root = serverSpan('GET', '/margin');
    expect(root).toBeDefined();
    const spans = trace(root!.traceId);
    // One tree: every span of the trace descends from the facade's, which starts it (a public
    // listener takes no trace context from its caller, not even the test client's).
    expect(root!.parentSpanId).toBeUndefined();
    const below = new Set([root!.spanId]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const s of spans) if (s.parentSpanId && below.has(s.parentSpanId) && !below.has(s.spanId)) grew = below.add(s.spanId).size > 0;
    }
    expect(spans.filter((s) => !below.has(s.spanId)).map((s) => s.name)).toEqual([]);
    const served = new Set(spans.filter((s) => s.kind === SERVER).map(port));
    for (const hop of ['facade', 'gatewayInternal', 'accounts', 'banking', 'oms'] as const)
      expect([hop, served.has(run.ports[hop])]).toEqual([hop, true]);
    const scopes = new Set(spans.map((s) => s.scope));
    for (const instrumentation of ['http', 'express', 'graphql', 'pg', 'redis', 'undici'])
      expect([instrumentation, [...scopes].some((s) => s.endsWith(`instrumentation-${instrumentation}`))]).toEqual([instrumentation, true]);
    expect(spans.some((s) => String(s.attributes['db.system'] ?? s.attributes['db.system.name']).includes('postgres'))).toBe(true);
    expect(spans.some((s) => s.attributes['db.system'] === 'redis' || s.attributes['db.system.name'] === 'redis')).toBe(true);
  });

  it('a fill continues the trace of the order that placed it, through the settlement stream into banking and accounts, and placing it is one trace through every hop', () => {
    expect(run.orderStatus).toBe(201);
    const root = serverSpan('POST', '/oms/order');
    expect(root).toBeDefined();
    // Placing it went facade → gateway → the OMS (and the OMS → banking for the hold), all in the one trace.
    const served = new Set(
      trace(root!.traceId)
        .filter((s) => s.kind === SERVER)
        .map(port),
    );
    for (const hop of ['facade', 'gatewayInternal', 'oms', 'banking'] as const)
      expect([hop, served.has(run.ports[hop])]).toEqual([hop, true]);
    const names = trace(root!.traceId).map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['oms fill', 'banking apply trade.executed', 'accounts apply trade.executed']));
    const applied = trace(root!.traceId).filter((s) => s.name.endsWith('apply trade.executed'));
    // The consumers' work is inside their spans: the ledger and the positions are written there.
    for (const span of applied) expect(trace(root!.traceId).some((s) => s.parentSpanId === span.spanId)).toBe(true);
  });

  it("attack: a public caller's traceparent neither names our trace nor forces its sampling; the hops behind still share one trace", () => {
    expect(run.forgedStatus).toBe(200);
    expect(run.spans.filter((s) => s.traceId === run.forgedTraceId).map((s) => s.name)).toEqual([]);
    const edge = run.spans.find(
      (s) => s.kind === SERVER && port(s) === run.ports.facade && path(s) === '/v1/accounts' && s.attributes['trading.trace_context'],
    );
    expect(edge).toMatchObject({ attributes: { 'trading.trace_context': 'not taken from a public caller' } });
    expect(edge!.parentSpanId).toBeUndefined(); // a root: its own trace, not the caller's
    // The caller's trace id is kept as an attribute, so support can find this trace from the id a vendor quotes.
    expect(edge!.attributes['trading.caller_trace_id']).toBe(run.forgedTraceId);
    // Behind the edge, the internal listeners carry the facade's own trace on: the gateway served it in the same trace.
    expect(trace(edge!.traceId).some((s) => s.kind === SERVER && port(s) === run.ports.gatewayInternal)).toBe(true);
  });

  it('log lines carry the trace and span ids of the request they were written in', () => {
    const root = serverSpan('GET', '/margin')!;
    const lines = run.logLines.map((l) => JSON.parse(l) as { service: string; traceId: string; spanId: string });
    const ofMargin = lines.filter((l) => l.traceId === root.traceId);
    expect(ofMargin.map((l) => l.service)).toEqual(expect.arrayContaining(['rest-facade', 'gateway', 'accounts', 'banking']));
    const spanIds = new Set(trace(root.traceId).map((s) => s.spanId));
    for (const line of ofMargin) expect(spanIds.has(line.spanId)).toBe(true);
  });
});
