import { sampleValue } from '@trading/testing';
import { startNpmStart, type NpmStart } from '../support/npm-start-process';

/** The samples of a scrape (no comments). */
const samples = (text: string) => text.split('\n').filter((l) => l && !l.startsWith('#'));

/** The sum of every sample of `name` whose labels include `labels`. */
function total(lines: string[], name: string, labels: Record<string, string> = {}): number {
  return lines
    .filter(
      (l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)),
    )
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** Each step of `values` that goes down: [from, to]. */
const decreases = (values: number[]) => values.slice(1).flatMap((v, i) => (v < values[i]! ? [[values[i]!, v]] : []));

/**
 * What a Prometheus scraping the all-in-one sees. Its two workers share every port and take new
 * connections in turn, so each scrape of an internal /metrics lands on the other worker: the answer
 * must be both workers' figures together, or every counter jumps back and forth between the two.
 */
describe('npm start on every core: /metrics a scraper can use', () => {
  let platform: NpmStart;
  beforeAll(async () => {
    platform = await startNpmStart();
  }, 120_000);
  afterAll(() => platform?.cleanUp());

  it("20 scrapes of the facade's internal /metrics in a row, each on a new connection: no counter ever goes down", async () => {
    const publicUrl = `http://127.0.0.1:${platform.env['FACADE_PORT']}`;
    const metricsUrl = `http://127.0.0.1:${platform.env['FACADE_INTERNAL_PORT']}/metrics`;
    // Uneven traffic: 30 requests on one kept-alive connection all reach one worker.
    for (let i = 0; i < 30; i++) await (await fetch(`${publicUrl}/healthz`)).text();

    const scrapes: Array<{ status: number; cpu: number; requests: number; workers: number | undefined }> = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(metricsUrl, { headers: { connection: 'close' } });
      const lines = samples(await res.text());
      scrapes.push({
        status: res.status,
        cpu: total(lines, 'process_cpu_seconds_total'),
        requests: total(lines, 'http_request_duration_seconds_count', { listener: 'public', route: '/healthz' }),
        workers: sampleValue(lines, 'platform_workers', { service: 'rest-facade' }),
      });
      // More traffic between scrapes, on new connections (either worker).
      await (await fetch(`${publicUrl}/healthz`, { headers: { connection: 'close' } })).text();
    }
    expect(scrapes.map((s) => s.status)).toEqual(Array(20).fill(200));
    expect(decreases(scrapes.map((s) => s.cpu))).toEqual([]);
    expect(decreases(scrapes.map((s) => s.requests))).toEqual([]);
    // Both workers' shares in every answer: the first 30 requests whichever worker took them, and each one since.
    expect(scrapes.map((s) => s.requests)).toEqual(Array.from({ length: 20 }, (_, i) => 30 + i));
    expect(scrapes.map((s) => s.workers)).toEqual(Array(20).fill(2));
  }, 60_000);

  it('answers one combined text for every service, leaving out what cannot be added up', async () => {
    for (const service of ['rest-facade', 'auth', 'gateway', 'accounts', 'banking', 'oms'] as const) {
      const port = platform.env[`${service === 'rest-facade' ? 'FACADE' : service.toUpperCase()}_INTERNAL_PORT`];
      const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { connection: 'close' } });
      const text = await res.text();
      expect([service, res.status, sampleValue(samples(text), 'platform_workers', { service })]).toEqual([service, 200, 2]);
      // One type line per metric: a combined answer, not the workers' texts one after the other.
      expect(text.split('\n').filter((l) => l.startsWith('# TYPE process_cpu_seconds_total '))).toHaveLength(1);
      // Each worker started at its own time: no sum of them means anything, so there is none.
      expect(text).not.toMatch(/^process_start_time_seconds/m);
    }
  }, 30_000);
});
