/** What the proof reads back: acknowledged writes in the databases, and an open event stream's fate. */
import type { Databases } from '../checks';
import type { Acknowledged } from './writes';

/** Each acknowledged write that is not in its database exactly once, described. */
export async function missingWrites(db: Databases, acknowledged: Acknowledged[]): Promise<string[]> {
  const missing: string[] = [];
  for (const w of acknowledged) {
    const [{ n }] =
      w.kind === 'deposit'
        ? await db.query(
            'banking',
            "SELECT count(*)::int AS n FROM funding_transactions WHERE account_id = $1 AND type = 'DEPOSIT' AND amount = $2",
            [w.accountId, w.amount],
          )
        : await db.query('oms', 'SELECT count(*)::int AS n FROM orders WHERE account_id = $1 AND client_order_id = $2', [
            w.accountId,
            w.key,
          ]);
    if (n !== 1) missing.push(`${w.kind} ${w.key}${w.amount ? ` (${w.amount})` : ''} found ${n} times`);
  }
  return missing;
}

export interface StreamFate {
  /** The server ended the stream (or the connection broke). */
  ended: boolean;
  /** It said `event: gap` (events may have been lost; read again). */
  gap: boolean;
  /** Events seen in all. */
  events: number;
  /** The stream's HTTP status (0: no answer). */
  status: number;
}

/** An order-events stream held open; `end(ms)` waits that long at most for it to end or say gap, then closes it. */
export function eventStream(url: string, token: string) {
  const fate: StreamFate = { ended: false, gap: false, events: 0, status: 0 };
  const abort = new AbortController();
  let text = '';
  const done = (async () => {
    try {
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: abort.signal });
      fate.status = res.status;
      if (!res.body) throw new Error(`no stream (${res.status})`);
      for await (const chunk of res.body) {
        text += Buffer.from(chunk as Uint8Array).toString('utf8');
        fate.events = (text.match(/^event: /gm) ?? []).length;
        if (/^event: gap$/m.test(text)) fate.gap = true;
      }
      fate.ended = true;
    } catch {
      if (!abort.signal.aborted) fate.ended = true;
    }
  })();
  return {
    async end(timeoutMs: number): Promise<StreamFate> {
      const deadline = Date.now() + timeoutMs;
      while (!fate.ended && !fate.gap && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      abort.abort();
      await done;
      return { ...fate };
    },
  };
}
