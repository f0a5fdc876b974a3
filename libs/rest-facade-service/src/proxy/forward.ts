import { PassThrough, pipeline, type Readable } from 'node:stream';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Pool } from 'undici';
import { AppError } from '@trading/errors';

/** Headers that describe one connection, not the message (RFC 9110 §7.6.1): never passed on. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect']);

/** The headers of `headers` a proxy may pass on: no hop-by-hop header, nor any the Connection header names. */
function endToEnd(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const named = String(headers['connection'] ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase());
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.includes(name)) continue;
    out[name] = value;
  }
  return out;
}

/**
 * The request's body as a stream of its own. Handed the request itself, undici destroys it once
 * read and detaches its socket, which the access log still reads when the answer ends.
 */
function bodyOf(req: IncomingMessage): Readable {
  return pipeline(req, new PassThrough(), () => undefined);
}

export interface ForwardOptions {
  /** Keep-alive connections to the target. */
  connections: number;
  /** The answer's headers, and then each piece of its body, must arrive within this. */
  timeoutMs: number;
}

/**
 * Passes requests on to one upstream over a pool of kept-alive connections, streaming both
 * bodies. It replaced http-proxy for the facade's hop to auth: on the token endpoint, which
 * every vendor backend calls for every user, http-proxy cost about a third of the facade's CPU.
 * An upstream that cannot be reached, or does not answer in time, is a 502 BAD_GATEWAY problem
 * (a stable code, not a proxy's plain-text page); a caller who goes away aborts the upstream call.
 */
export class Forwarder {
  private readonly pool: Pool;

  constructor(
    target: string,
    private readonly peer: string,
    private readonly options: ForwardOptions,
  ) {
    this.pool = new Pool(new URL(target).origin, { connections: options.connections, keepAliveTimeout: 30_000 });
  }

  /**
   * Forwards `req` (its method, its path below the mount point, its end-to-end headers and
   * body) with `headers` applied on top (a value of undefined removes one), and streams the
   * answer into `res`, keeping any header already set on `res` that the answer does not name.
   */
  async forward(req: IncomingMessage, res: ServerResponse, headers: Record<string, string | undefined>): Promise<void> {
    const outgoing = endToEnd(req.headers);
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) delete outgoing[name];
      else outgoing[name] = value;
    }
    const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    const abort = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) abort.abort();
    };
    res.once('close', onClose);
    let answer;
    try {
      answer = await this.pool.request({
        method: req.method as 'GET',
        path: req.url ?? '/',
        headers: outgoing,
        body: hasBody && req.method !== 'GET' && req.method !== 'HEAD' ? bodyOf(req) : undefined,
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
        signal: abort.signal,
      });
    } catch {
      res.off('close', onClose);
      if (abort.signal.aborted) return;
      throw new AppError('BAD_GATEWAY', `The ${this.peer} service could not be reached; try again`);
    }
    for (const [name, value] of Object.entries(endToEnd(answer.headers))) res.setHeader(name, value);
    res.writeHead(answer.statusCode);
    pipeline(answer.body, res, () => res.off('close', onClose));
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
