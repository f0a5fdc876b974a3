import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import express, { type Request, type RequestHandler, type Response } from 'express';
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

/** An app that answers a request itself (an Express app): the upstream when it runs in this process. */
export type InProcessApp = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

export interface ForwardOptions {
  /** Keep-alive connections to the target. */
  connections: number;
  /** The answer's headers, and then each piece of its body, must arrive within this. */
  timeoutMs: number;
  /** The largest request body passed on (default 64 KiB). */
  maxBodyBytes?: number;
  /**
   * The upstream's app when it runs in this process (the all-in-one): handed the request itself,
   * with the same headers applied, instead of a socket; none (it stopped) is an unreachable upstream.
   */
  inProcess?: () => InProcessApp | undefined;
}

/**
 * Passes requests on to one upstream over a pool of kept-alive connections, streaming the
 * answer. It replaced http-proxy-middleware for the facade's hop to auth: on the token endpoint,
 * which every vendor backend calls for every user, it takes about a quarter less of the facade's CPU.
 * An upstream that cannot be reached, or does not answer in time, is a 502 BAD_GATEWAY problem
 * (a stable code, not a proxy's plain-text page); a caller who goes away aborts the upstream call.
 */
export class Forwarder {
  private readonly pool: Pool;
  private readonly readBody: RequestHandler;

  constructor(
    target: string,
    private readonly peer: string,
    private readonly options: ForwardOptions,
  ) {
    this.pool = new Pool(new URL(target).origin, { connections: options.connections, keepAliveTimeout: 30_000 });
    this.readBody = express.raw({ type: () => true, limit: options.maxBodyBytes ?? 64 * 1024 });
  }

  /**
   * Forwards `req` (its method, its path below the mount point, its end-to-end headers and
   * body) with `headers` applied on top (a value of undefined removes one), and streams the
   * answer into `res`, keeping any header already set on `res` that the answer does not name.
   */
  async forward(req: IncomingMessage, res: ServerResponse, headers: Record<string, string | undefined>): Promise<void> {
    if (this.options.inProcess) return this.handOver(this.options.inProcess(), req, res, headers);
    const body = await this.bodyOf(req, res);
    const outgoing = endToEnd(req.headers);
    // The body goes on as read: whole, decoded, its length counted again by the client.
    delete outgoing['content-length'];
    if (body) delete outgoing['content-encoding'];
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) delete outgoing[name];
      else outgoing[name] = value;
    }
    // An emitter, not an AbortController: undici takes either, and this one costs no DOMException per request.
    const abort = new EventEmitter();
    const onClose = () => {
      if (!res.writableFinished) abort.emit('abort');
    };
    res.once('close', onClose);
    try {
      // stream(): the answer's body is written straight into `res`, without a readable in between.
      await this.pool.stream(
        {
          method: req.method as 'GET',
          path: req.url ?? '/',
          headers: outgoing,
          body,
          headersTimeout: this.options.timeoutMs,
          bodyTimeout: this.options.timeoutMs,
          signal: abort,
        },
        ({ statusCode, headers: answered }) => {
          for (const [name, value] of Object.entries(endToEnd(answered))) res.setHeader(name, value);
          res.writeHead(statusCode);
          return res;
        },
      );
    } catch {
      // Once the answer has begun, undici has ended `res` itself; before, the caller gets a problem.
      if (res.headersSent || res.destroyed) return;
      throw new AppError('BAD_GATEWAY', `The ${this.peer} service could not be reached; try again`);
    } finally {
      res.off('close', onClose);
    }
  }

  /**
   * The request's body, read whole (auth's endpoints take a few kilobytes at most): a buffer is
   * sent with one write, where a stream costs a pipeline per request. Over the limit it is a 400
   * naming the body, as every listener's parser answers.
   */
  private bodyOf(req: IncomingMessage, res: ServerResponse): Promise<Buffer | undefined> {
    return new Promise((resolve, reject) =>
      this.readBody(req as Request, res as Response, (err) =>
        err ? reject(err) : resolve(Buffer.isBuffer((req as Request).body) ? ((req as Request).body as Buffer) : undefined),
      ),
    );
  }

  /** The in-process upstream answers `req` itself: its headers changed in place, as the forwarded copy would be. */
  private handOver(app: InProcessApp | undefined, req: IncomingMessage, res: ServerResponse, headers: Record<string, string | undefined>) {
    if (!app) throw new AppError('BAD_GATEWAY', `The ${this.peer} service could not be reached; try again`);
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) delete req.headers[name];
      else req.headers[name] = value;
    }
    return new Promise<void>((resolve, reject) => {
      res.once('close', () => resolve());
      // Its own last handlers answer every request (404, problems): reaching past them is a fault.
      app(req, res, (err) => reject(err ?? new AppError('BAD_GATEWAY', `The ${this.peer} service did not answer; try again`)));
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
