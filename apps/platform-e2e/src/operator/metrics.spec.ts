import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { http, sampleValue, scrapeMetrics } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { patSession } from '../support/sessions';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0]];

/** What an operator scrapes from each service's internal listener. */
describe('metrics worth scraping', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ API_RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(() => p?.stop());

  const scrape = (service: keyof TestPlatform['internalUrls']) => scrapeMetrics(`${p.internalUrls[service]}/metrics`);

  it('per-route latency at the facade, per-operation at the gateway, and rate-limit refusals by budget', async () => {
    const token = await patSession(p, alice.email, 'READ_ONLY');
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await http('GET', `${p.urls.api}/accounts`, { token })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);

    const facade = await scrape('rest-facade');
    expect(
      sampleValue(facade, 'http_request_duration_seconds_count', { listener: 'public', method: 'GET', route: '/accounts', status: '200' }),
    ).toBe(3);
    // Refused before a route matched: the budget, not the route, is what a refusal is counted by.
    expect(sampleValue(facade, 'http_request_duration_seconds_count', { listener: 'public', method: 'GET', status: '429' })).toBe(1);
    expect(sampleValue(facade, 'rate_limit_refusals_total', { limit: 'token' })).toBe(1);

    const gateway = await scrape('gateway');
    expect(sampleValue(gateway, 'graphql_operation_duration_seconds_count', { operation: 'Accounts', status: 'ok' })).toBe(3);
  });

  it('database pools, the outbox backlog and each settlement group: lag, unapplied events, dead letters', async () => {
    for (const service of ['auth', 'accounts', 'banking', 'oms'] as const) {
      const lines = await scrape(service);
      expect([service, sampleValue(lines, 'db_pool_connections', { state: 'total' })]).toEqual([service, expect.any(Number)]);
      expect(sampleValue(lines, 'db_pool_connections', { state: 'waiting' })).toBe(0);
    }
    expect(sampleValue(await scrape('oms'), 'oms_outbox_backlog')).toBeGreaterThanOrEqual(0);
    for (const group of ['accounts', 'banking'] as const) {
      const lines = await scrape(group);
      expect(sampleValue(lines, 'settlement_consumer_lag', { group })).toBeGreaterThanOrEqual(0);
      expect(sampleValue(lines, 'settlement_unapplied_events', { group })).toBeGreaterThanOrEqual(0);
      expect(sampleValue(lines, 'settlement_dead_letters_total', { group })).toBe(0);
    }
  });

  it('serves every metric deploy/grafana/served-metrics.json lists (what the dashboard may query), of its type and with its labels', async () => {
    const listed = JSON.parse(readFileSync(join(__dirname, '../../../../deploy/grafana/served-metrics.json'), 'utf8')) as Record<
      string,
      { type: string; labels: string[]; services: Array<keyof TestPlatform['internalUrls']> } | string
    >;
    const found: string[] = [];
    for (const [name, spec] of Object.entries(listed)) {
      if (typeof spec === 'string') continue; // $comment
      for (const service of spec.services) {
        const text = await (await fetch(`${p.internalUrls[service]}/metrics`)).text();
        const type = new RegExp(`^# TYPE ${name} (\\w+)$`, 'm').exec(text)?.[1];
        // Label names of every sample (a histogram's series: _bucket adds `le`).
        const labelSets = new Set(
          text
            .split('\n')
            .filter((l) => new RegExp(`^${name}(_bucket|_sum|_count)?[{ ]`).test(l))
            .map((l) =>
              [...(/\{([^}]*)\}/.exec(l)?.[1] ?? '').matchAll(/(\w+)="/g)]
                .map((m) => m[1])
                .filter((k) => k !== 'le')
                .sort()
                .join(','),
            ),
        );
        found.push(`${service} ${name} ${type ?? 'missing'} ${[...labelSets].join('|')}`);
      }
    }
    const expected = Object.entries(listed).flatMap(([name, spec]) =>
      typeof spec === 'string'
        ? []
        : spec.services.map((service) => `${service} ${name} ${spec.type} ${[...spec.labels, 'service'].sort().join(',')}`),
    );
    // A counter or histogram with labels has no series until first counted: these were all counted above or by start-up.
    expect(found).toEqual(expected);
  });
});
