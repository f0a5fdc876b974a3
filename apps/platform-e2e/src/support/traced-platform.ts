/**
 * Run by tracing.spec.ts in a process of its own (instrumentation patches modules as Node loads
 * them, which Jest's module system bypasses): the whole product in process with tracing into an
 * in-memory exporter, one margin read, one read with a forged traceparent and one market order through the REST API, then every
 * span and every log line that names a trace, as one JSON line on stdout.
 */
import { spans } from './traced-platform.sdk';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { until } from './orders-platform';
import { patSession } from './sessions';
import { startTestPlatform } from './test-platform';

/** A trace id and sampled flag a public caller chose. */
const FORGED_TRACEPARENT = `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`;

/** GET over a plain TCP socket, headers exactly as given; the answer's status. */
function rawGet(base: string, path: string, headers: Record<string, string>): Promise<{ status: number }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let answer = '';
    socket.on('connect', () => {
      const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
      socket.write(`GET ${path} HTTP/1.1\r\nhost: ${url.host}\r\n${lines.join('')}connection: close\r\n\r\n`);
    });
    socket.on('data', (chunk) => (answer += String(chunk)));
    socket.on('end', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0) }));
    socket.on('error', reject);
  });
}

async function main(): Promise<void> {
  const logLines: string[] = [];
  const logDestination = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const p = await startTestPlatform(
    // The hops behind the edge log their successes at debug; each hop over its own listener, as deployed, so every hop has its HTTP spans.
    { LOG_LEVEL: 'debug', PLATFORM_IN_PROCESS_CALLS: 'false' },
    {
      oms: { OMS_PRICE_TICK_MS: '0', OMS_ENGINE_INTERVAL_MS: '50', OMS_RELAY_INTERVAL_MS: '25', OMS_FILL_LIQUIDITY: '100' },
      logDestination,
    },
  );
  try {
    const token = await patSession(p, DEMO_USERS[0]!.email, 'READ_WRITE');
    const accountId = DEMO_ACCOUNTS[0]!.id;
    await new Promise((r) => setTimeout(r, 200)); // let the spans of the set-up end
    spans.reset();
    logLines.length = 0;

    const margin = await http('GET', `${p.urls.api}/accounts/${accountId}/margin`, { token });
    // A caller from outside that names the trace and asks for it to be sampled (over a raw
    // socket: this process's own HTTP clients are instrumented and would replace the header).
    const forged = await rawGet(p.urls.api, '/v1/accounts', {
      authorization: `Bearer ${token}`,
      traceparent: FORGED_TRACEPARENT,
      baggage: 'tenant=forged',
    });
    await p.oms.feed.setPrice('AAPL', '190.00');
    const order = await http('POST', `${p.urls.api}/oms/order`, {
      token,
      body: { accountId, symbol: 'AAPL', side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '1', clientOrderId: 'traced-1' },
    });
    // Settled when both consumers have applied the fill (their spans end after the commit).
    await until(
      async () => spans.getFinishedSpans().map((s) => s.name),
      (names) => names.includes('banking apply trade.executed') && names.includes('accounts apply trade.executed'),
      'the fill to be applied by banking and accounts',
    );
    await new Promise((r) => setTimeout(r, 200));

    const port = (url: string) => Number(new URL(url).port);
    console.log(
      JSON.stringify({
        marginStatus: margin.status,
        forgedStatus: forged.status,
        forgedTraceId: FORGED_TRACEPARENT.split('-')[1],
        orderStatus: order.status,
        ports: {
          facade: port(p.urls.api),
          gatewayInternal: port(p.urls.gatewayInternal),
          accounts: port(p.urls.accounts),
          banking: port(p.urls.banking),
          oms: port(p.urls.oms),
        },
        spans: spans.getFinishedSpans().map((s) => ({
          name: s.name,
          kind: s.kind,
          traceId: s.spanContext().traceId,
          spanId: s.spanContext().spanId,
          parentSpanId: s.parentSpanContext?.spanId,
          scope: s.instrumentationScope.name,
          attributes: s.attributes,
        })),
        logLines: logLines.filter((line) => line.includes('"traceId"')),
      }),
    );
  } finally {
    await p.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
