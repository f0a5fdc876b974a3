/** What the bench's databases' backends wait on during a window, sampled from pg_stat_activity. */
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';

export interface PgWaits {
  samples: number;
  /** Mean backends running a statement (waiting or not), and those waiting on a lock (heavyweight or lightweight) or another process. */
  busy: number;
  waiting: number;
  /** The commonest waits, most first: `type/event` as pg_stat_activity names it (`LWLock/WALWrite`: a commit waiting for the WAL to reach disk), the head of the statement, mean backends waiting so. */
  top: Array<{ event: string; statement: string; backends: number }>;
}

/**
 * Samples every `everyMs` the backends of the databases whose names start with `prefix`: what
 * serialises an order shows as backends waiting on a lock, a full machine as busy backends waiting
 * on nothing. One connection of its own; a connection that fails ends the sampling (nothing said),
 * never the bench, so `finish()` must be called whatever happened to the load meanwhile.
 */
export async function startPgWaits(serverUrl: string, prefix: string, everyMs = 50): Promise<{ finish(): Promise<PgWaits> }> {
  const client = new Client({ connectionString: `${serverUrl}/postgres` });
  client.on('error', () => undefined);
  const connected = await client.connect().then(
    () => true,
    () => false,
  );
  const counts = new Map<string, { event: string; statement: string; n: number }>();
  let [samples, busy, waiting, stopped] = [0, 0, 0, false];
  const loop = (async () => {
    while (connected && !stopped) {
      const { rows } = await client.query<{ event: string | null; statement: string }>(
        `SELECT CASE WHEN wait_event_type = ANY($2) THEN wait_event_type || '/' || wait_event END AS event,
                left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS statement
           FROM pg_stat_activity
          WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' AND state = 'active' AND starts_with(datname, $1)`,
        [prefix, ['Lock', 'LWLock', 'IPC']],
      );
      samples++;
      busy += rows.length;
      for (const { event, statement } of rows.filter((r) => r.event)) {
        waiting++;
        const key = `${event} ${statement.trim()}`;
        const seen = counts.get(key) ?? { event: event!, statement: statement.trim(), n: 0 };
        counts.set(key, { ...seen, n: seen.n + 1 });
      }
      await sleep(everyMs);
    }
  })().catch(() => undefined);
  return {
    async finish(): Promise<PgWaits> {
      stopped = true;
      await loop;
      await client.end().catch(() => undefined);
      const mean = (n: number) => (samples ? n / samples : 0);
      const top = [...counts.values()].sort((a, b) => b.n - a.n).slice(0, 4);
      return {
        samples,
        busy: mean(busy),
        waiting: mean(waiting),
        top: top.map((c) => ({ event: c.event, statement: c.statement, backends: mean(c.n) })),
      };
    },
  };
}
