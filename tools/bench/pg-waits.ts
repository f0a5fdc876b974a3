import { Client } from 'pg';

/** One kind of wait: PostgreSQL's wait event and the head of the statement that waited. */
interface PgWait {
  /** `type/event` as pg_stat_activity names it, e.g. `LWLock/WALWrite` (a commit waiting for the WAL to reach disk). */
  event: string;
  statement: string;
  /** Mean number of backends waiting so, over the samples. */
  backends: number;
}

/** What the bench's databases' backends were doing during a window, sampled from pg_stat_activity. */
export interface PgWaits {
  samples: number;
  /** Mean backends running a statement (waiting or not). */
  busy: number;
  /** Mean backends waiting on a lock (heavyweight or lightweight) or on another process. */
  waiting: number;
  /** The commonest waits, most first. */
  top: PgWait[];
}

const WAIT_TYPES = ['Lock', 'LWLock', 'IPC'];

/**
 * Samples pg_stat_activity every `everyMs` for the databases whose names start with `prefix`:
 * what serialises an order shows up as backends waiting on a lock, where a full machine shows
 * none. One connection of its own; a sample costs PostgreSQL a fraction of a millisecond.
 * Never rejects: `finish()` must be called, whatever happened to the load meanwhile.
 */
export async function startPgWaits(serverUrl: string, prefix: string, everyMs = 50): Promise<{ finish(): Promise<PgWaits> }> {
  const client = new Client({ connectionString: `${serverUrl}/postgres` });
  // A sampling connection that fails or breaks ends the sampling (no samples: nothing said), not the bench.
  client.on('error', () => undefined);
  const connected = await client.connect().then(
    () => true,
    () => false,
  );
  const counts = new Map<string, { event: string; statement: string; n: number }>();
  let samples = 0;
  let busy = 0;
  let waiting = 0;
  let stopped = false;
  const loop = (async () => {
    while (connected && !stopped) {
      const { rows } = await client.query<{ event: string | null; statement: string }>(
        `SELECT CASE WHEN wait_event_type = ANY($2) THEN wait_event_type || '/' || wait_event END AS event,
                left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS statement
           FROM pg_stat_activity
          WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' AND state = 'active' AND starts_with(datname, $1)`,
        [prefix, WAIT_TYPES],
      );
      samples++;
      busy += rows.length;
      for (const row of rows) {
        if (!row.event) continue;
        waiting++;
        const statement = row.statement.trim();
        const key = `${row.event} ${statement}`;
        const seen = counts.get(key) ?? { event: row.event, statement, n: 0 };
        seen.n++;
        counts.set(key, seen);
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })().catch(() => undefined);
  return {
    async finish(): Promise<PgWaits> {
      stopped = true;
      await loop;
      await client.end().catch(() => undefined);
      const mean = (n: number) => (samples ? n / samples : 0);
      const top = [...counts.values()]
        .sort((a, b) => b.n - a.n)
        .slice(0, 4)
        .map((c) => ({ event: c.event, statement: c.statement, backends: mean(c.n) }));
      return { samples, busy: mean(busy), waiting: mean(waiting), top };
    },
  };
}
