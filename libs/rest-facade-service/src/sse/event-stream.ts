import type { Request, Response } from 'express';
import { PROOF_CHECKED_AT_OPEN, type EdgeAuthenticator } from '@trading/auth';
import { AppError } from '@trading/errors';
import type { HeldSlots } from '@trading/rate-limit';

/**
 * What every Server-Sent Events endpoint of the facade shares (the order events, the live
 * quotes): a cap on open streams per user over every instance, the stream's headers and `retry:`, heartbeat
 * comments, and a periodic check that the caller's access still stands, ending the stream with
 * `event: end` (naming why) when it does not.
 */

/**
 * Open streams per user, one slot each, counted over every facade instance (HeldSlots: leases in
 * Redis, renewed while the stream lives, lapsing within seconds of an instance's death).
 */
export class StreamSlots {
  constructor(
    private readonly slots: HeldSlots,
    /** How the refusal names them, e.g. "event streams". */
    private readonly what: string,
  ) {}

  /**
   * Takes the user's slot (429 when all are taken), given back when the client leaves or
   * `release` is called. Its return is wired before anything is awaited: a listener attached
   * later misses a client that hangs up meanwhile, and its slot stays taken. `gone` aborts when
   * the client leaves.
   */
  async take(req: Request, res: Response, userId: string): Promise<{ gone: AbortSignal; release: () => void }> {
    const taken = this.slots.take(userId);
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      taken.then((id) => (id ? this.slots.release(id) : undefined)).catch(() => undefined);
    };
    const gone = new AbortController();
    const left = () => {
      gone.abort();
      release();
    };
    res.once('close', left);
    // Hung up before the handler ran (while being authenticated): `close` has already fired.
    if (req.socket.destroyed) left();
    if (!(await taken)) {
      held = false;
      throw new AppError('RATE_LIMITED', `At most ${this.slots.rule.max} ${this.what} may be open at once; close one first`);
    }
    return { gone: gone.signal, release };
  }
}

export interface EventStreamOptions {
  /** A comment line this often keeps proxies from closing an idle stream. */
  heartbeatMs: number;
  /** How often the caller's access is checked again (edge caches; revocations invalidate them at once). Default 1 s. */
  accessCheckMs?: number;
  /** The client left: the stream ends without `event: end`. */
  signal: AbortSignal;
  /** Runs once when the stream ends, for whatever reason (unsubscribe, give the slot back). */
  onEnd: () => void;
}

export interface EventStream {
  /** Writes one whole block (ending in a blank line); nothing once ended. */
  write(block: string): void;
  /** Ends the stream; with a reason, `event: end` says it first. Harmless twice. */
  end(reason?: string): void;
  readonly ended: boolean;
}

/** Answers 200 `text/event-stream`, sends `retry:`, then heartbeats and access checks until the stream ends. */
export function openEventStream(req: Request, res: Response, edge: EdgeAuthenticator, options: EventStreamOptions): EventStream {
  res.status(200).set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
  res.write('retry: 3000\n\n');

  let ended = false;
  const end = (reason?: string) => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    clearInterval(accessCheck);
    options.onEnd();
    if (reason && !res.writableEnded) res.write(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`);
    res.end();
  };
  let checking = false;
  const accessCheck = setInterval(() => {
    if (checking || ended) return;
    checking = true;
    edge
      // A DPoP proof was checked when the stream opened; the token's binding is checked again.
      .authenticate(req.get('authorization'), req.ip, PROOF_CHECKED_AT_OPEN)
      .then(
        () => undefined,
        (err: unknown) => end(err instanceof AppError ? err.message : 'The session could not be confirmed'),
      )
      .finally(() => (checking = false));
  }, options.accessCheckMs ?? 1000);
  const heartbeat = setInterval(() => ended || res.write(': heartbeat\n\n'), options.heartbeatMs);
  options.signal.addEventListener('abort', () => end(), { once: true });
  return {
    write: (block) => {
      if (!ended) res.write(block);
    },
    end,
    get ended() {
      return ended;
    },
  };
}
