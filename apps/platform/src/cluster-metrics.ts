/**
 * /metrics of the all-in-one on every core. Every worker runs every service on the same ports, and
 * a scrape lands on whichever worker the cluster hands its connection to: answered by that worker
 * alone, consecutive scrapes would alternate between one worker's counters and the other's, which
 * a scraper reads as resets. So the worker a scrape reaches asks the primary, which asks every
 * worker for its share of that service (prom-client's JSON) and combines them with prom-client's
 * AggregatorRegistry: counters and histograms add up, and a metric's own `aggregator` says where
 * they must not (the process start time is left out; a figure every worker reads from the same
 * PostgreSQL or Redis is taken once, `max`). A worker that does not answer in time fails the
 * scrape (503), never a partial sum that would look like a reset.
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { errors } from '@trading/errors';
import type { SharedMetrics } from '@trading/service';

/** How long the primary waits for every worker's share, and a worker for the primary's sum. */
const SHARE_TIMEOUT_MS = 3000;

/** The metric every worker adds to its share: summed, it says how many workers the scrape covers. */
const WORKERS_METRIC = { name: 'platform_workers', help: 'Processes whose metrics this scrape combines', type: 'gauge', aggregator: 'sum' };

/** A worker is ready to be asked for shares (sent once its handler listens). */
interface SharingMessage {
  type: 'metrics-sharing';
}
/** Worker → primary: a scrape of `service` reached me; `id` is mine. */
interface ScrapeMessage {
  type: 'metrics-scrape';
  id: number;
  service: string;
}
/** Primary → every worker: your share of `service` for the primary's request `id`. */
interface CollectMessage {
  type: 'metrics-collect';
  id: number;
  service: string;
}
/** Worker → primary: prom-client's JSON of its registry (non-finite numbers as strings: IPC speaks JSON). */
interface ShareMessage {
  type: 'metrics-share';
  id: number;
  metrics: unknown[];
  /** It could not read its registry: the scrape fails rather than miss this worker's share. */
  error?: string;
}
/** Primary → the asking worker: the combined text, or why there is none. */
interface SummedMessage {
  type: 'metrics-summed';
  id: number;
  text?: string;
  error?: string;
}

/** JSON has no NaN or Infinity (a gauge that cannot read its source says NaN): carried as strings and read back. */
const NON_FINITE = new Set(['NaN', 'Infinity', '-Infinity']);
const encodeValue = (_key: string, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? String(value) : value);
const decodeValue = (key: string, value: unknown) =>
  key === 'value' && typeof value === 'string' && NON_FINITE.has(value) ? Number(value) : value;

/** In a worker: each service's registry, shared with the primary; a scrape answers the primary's sum. */
export function shareWorkerMetrics(): SharedMetrics {
  const registries = new Map<string, Registry>();
  const pending = new Map<number, { resolve(text: string): void; reject(err: Error): void }>();
  let nextId = 0;
  process.on('message', (message: CollectMessage | SummedMessage) => {
    if (message?.type === 'metrics-collect')
      share(message).catch((err: Error) =>
        process.send?.({ type: 'metrics-share', id: message.id, metrics: [], error: err.message } satisfies ShareMessage),
      );
    if (message?.type === 'metrics-summed') {
      const waiting = pending.get(message.id);
      pending.delete(message.id);
      if (message.text !== undefined) waiting?.resolve(message.text);
      else waiting?.reject(errors.unavailable(`metrics: ${message.error ?? 'no answer'}`));
    }
  });
  const share = async ({ id, service }: CollectMessage) => {
    // A worker still starting has no share of the service yet: it adds nothing, not even to the count.
    const registry = registries.get(service);
    const metrics = registry
      ? [...(await registry.getMetricsAsJSON()), { ...WORKERS_METRIC, values: [{ labels: { service }, value: 1 }] }]
      : [];
    process.send?.({ type: 'metrics-share', id, metrics: JSON.parse(JSON.stringify(metrics, encodeValue)) } satisfies ShareMessage);
  };
  process.send?.({ type: 'metrics-sharing' } satisfies SharingMessage);
  return {
    add: (service, registry) => void registries.set(service, registry),
    scrape: (service) =>
      new Promise<string>((resolve, reject) => {
        const id = nextId++;
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(errors.unavailable('metrics: the platform did not combine its workers’ metrics in time'));
        }, SHARE_TIMEOUT_MS + 1000);
        pending.set(id, {
          resolve: (text) => (clearTimeout(timer), resolve(text)),
          reject: (err) => (clearTimeout(timer), reject(err)),
        });
        process.send?.({ type: 'metrics-scrape', id, service } satisfies ScrapeMessage);
      }),
  };
}

/** In the primary: answers each worker's scrape with every sharing worker's share, combined. */
export function sumWorkerMetrics(): void {
  const sharing = new Set<Worker>();
  const requests = new Map<number, { expected: Set<Worker>; shares: unknown[][]; done(error?: string): void }>();
  let nextId = 0;
  // A worker that dies is no longer waited for (its counters leave the sum: a reset, as a restart is).
  cluster.on('exit', (worker) => {
    sharing.delete(worker);
    for (const request of requests.values()) if (request.expected.delete(worker) && request.expected.size === 0) request.done();
  });
  cluster.on('message', (worker: Worker, message: SharingMessage | ScrapeMessage | ShareMessage) => {
    if (message?.type === 'metrics-sharing') sharing.add(worker);
    if (message?.type === 'metrics-share') {
      const request = requests.get(message.id);
      if (!request?.expected.delete(worker)) return;
      if (message.error) return request.done(`a worker could not read its metrics: ${message.error}`);
      request.shares.push(JSON.parse(JSON.stringify(message.metrics), decodeValue) as unknown[]);
      if (request.expected.size === 0) request.done();
    }
    if (message?.type === 'metrics-scrape') {
      const asker = worker;
      const answer = (reply: Omit<SummedMessage, 'type' | 'id'>) => {
        if (asker.isConnected()) asker.send({ type: 'metrics-summed', id: message.id, ...reply } satisfies SummedMessage);
      };
      const id = nextId++;
      const expected = new Set([...sharing].filter((w) => w.isConnected()));
      const timer = setTimeout(() => request.done('a worker did not send its share in time'), SHARE_TIMEOUT_MS);
      const request = {
        expected,
        shares: [] as unknown[][],
        done: (error?: string) => {
          clearTimeout(timer);
          if (!requests.delete(id)) return;
          if (error) return answer({ error });
          combine(request.shares).then(
            (text) => answer({ text }),
            (err: Error) => answer({ error: err.message }),
          );
        },
      };
      requests.set(id, request);
      for (const w of expected) w.send({ type: 'metrics-collect', id, service: message.service } satisfies CollectMessage);
      if (expected.size === 0) request.done('no worker is serving yet');
    }
  });
}

/** The workers' shares as one exposition text (each metric combined by its `aggregator`, `sum` unless it says otherwise). */
async function combine(shares: unknown[][]): Promise<string> {
  return AggregatorRegistry.aggregate(shares).metrics();
}
