/**
 * Writes a client would retry: deposits and market orders, each with its own Idempotency-Key,
 * sent again with the same key (and body) after a 503, a 5xx or no answer, as the API asks of
 * its clients. Every write the API acknowledged is recorded, so that after a failover each one
 * can be looked for in the databases: present, and present once.
 */
import { sleep } from '../processes';

export interface Acknowledged {
  kind: 'deposit' | 'order';
  key: string;
  accountId: string;
  /** Deposits: the amount, unique per deposit, which finds it in the ledger. */
  amount?: string;
  /** When the API answered 201. */
  at: number;
}

export interface WriteTally {
  acknowledged: Acknowledged[];
  /** Answers that asked for a retry: 503 with Retry-After. */
  retriesAsked: number;
  /** 5xx without Retry-After, or 500: a failure the client could not read as "try again". */
  broken: number;
  /** No answer at all (connection refused or reset, timeout). */
  unanswered: number;
  /** Writes still not acknowledged when the run stopped them. */
  abandoned: number;
  /** Other answers (4xx): by status. */
  refused: Record<string, number>;
}

const retryable = (status: number) => status === 0 || status >= 500;

/**
 * One write after another, deposits and orders in turn, until stopped. Each is retried every
 * 250 ms until acknowledged or refused; a stop lets the one in flight finish its retries for at
 * most `drainMs`.
 */
export function retriedWrites(apiUrl: string, token: string, accounts: string[], symbol: string, drainMs = 20_000) {
  const tally: WriteTally = { acknowledged: [], retriesAsked: 0, broken: 0, unanswered: 0, abandoned: 0, refused: {} };
  let running = true;
  let stoppedAt = Infinity;
  const run = async () => {
    for (let n = 0; running; n++) {
      // A deposit and an order to each account in turn.
      const accountId = accounts[Math.floor(n / 2) % accounts.length]!;
      const key = `ha-proof-${process.pid}-${n}`;
      const deposit = n % 2 === 0;
      // A unique amount per deposit (1.01, 2.01, …: USD takes two decimals) finds it among the account's funding.
      const amount = `${n + 1}.01`;
      const request = deposit
        ? { path: '/banking/deposit', body: { accountId, amount, currency: 'USD', sandboxOutcome: 'COMPLETED' } }
        : {
            path: '/oms/order',
            body: { accountId, symbol, side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '1', clientOrderId: key },
          };
      for (;;) {
        const status = await send(apiUrl + request.path, token, key, request.body, tally);
        if (status === 201) {
          tally.acknowledged.push({
            kind: deposit ? 'deposit' : 'order',
            key,
            accountId,
            amount: deposit ? amount : undefined,
            at: Date.now(),
          });
          break;
        }
        if (!retryable(status)) {
          tally.refused[status] = (tally.refused[status] ?? 0) + 1;
          break;
        }
        if (Date.now() - stoppedAt > drainMs) {
          tally.abandoned++;
          break;
        }
        await sleep(250);
      }
      await sleep(100);
    }
  };
  const done = run();
  return {
    tally,
    async stop(): Promise<WriteTally> {
      running = false;
      stoppedAt = Date.now();
      await done;
      return tally;
    },
  };
}

async function send(url: string, token: string, key: string, body: unknown, tally: WriteTally): Promise<number> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer();
    if (res.status === 503 && res.headers.get('retry-after')) tally.retriesAsked++;
    else if (res.status >= 500) tally.broken++;
    return res.status;
  } catch {
    tally.unanswered++;
    return 0;
  }
}
