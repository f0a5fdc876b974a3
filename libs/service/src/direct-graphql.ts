/**
 * POST /graphql on an internal listener, answered before Express sees the request. Every
 * internal call (facade → gateway → subgraph) pays this hop, and Express's router and body
 * parser were 5–6% of each hop's CPU. It behaves as the Express route it stands in front of
 * (request id, duration metric, access log, body limit, problem+json for a body that is not
 * JSON); another method, path or content type goes on to Express as before.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Express } from 'express';
import type { Histogram } from 'prom-client';
import { AppError, PROBLEM_CONTENT_TYPE, problemFromError } from '@trading/errors';
import { REQUEST_ID_HEADER, requestIdFrom, runWithRequestId, type Logger } from '@trading/logging';
import { logRequest } from './access-log';
import type { GraphQLEndpoint } from './graphql-endpoint';

const GRAPHQL_PATH = '/graphql';

export interface DirectGraphQLOptions {
  endpoint: GraphQLEndpoint;
  /** Bodies above this many bytes are refused unread (what `express.json({ limit })` refuses). */
  limitBytes: number;
  logger: Logger;
  duration?: Histogram;
}

/** The direct handler of each internal app that has one; `listen` puts it in front of the app. */
const directHandlers = new WeakMap<Express, (req: IncomingMessage, res: ServerResponse) => boolean>();

/** The request listener for `app`: its direct GraphQL handler first, when it has one. */
export function requestListenerFor(app: Express): RequestListener {
  const direct = directHandlers.get(app);
  if (!direct) return app;
  return (req, res) => {
    if (!direct(req, res)) app(req, res);
  };
}

/** JSON in UTF-8 (what every internal caller sends); any other charset is left to Express's parser, which decodes it. */
const isUtf8Json = (contentType: string | undefined) => {
  if (!contentType) return false;
  const [type, ...params] = contentType
    .toLowerCase()
    .split(';')
    .map((part) => part.trim());
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  return (
    (type === 'application/json' || (type!.startsWith('application/') && type!.endsWith('+json'))) && (!charset || charset === 'utf-8')
  );
};

export function serveGraphQLDirectly(app: Express, options: DirectGraphQLOptions): void {
  const { endpoint, limitBytes, logger, duration } = options;
  const handle = (req: IncomingMessage, res: ServerResponse, requestId: string) => {
    const started = performance.now();
    const stop = duration?.startTimer();
    res.once('finish', () => {
      stop?.({ listener: 'internal', method: 'POST', route: GRAPHQL_PATH, status: String(res.statusCode) });
      logRequest(
        logger,
        'internal',
        { requestId, method: 'POST', url: req.url!, remoteAddress: req.socket.remoteAddress },
        res.statusCode,
        started,
      );
    });
    const refuse = (err: unknown) => {
      if (!(err instanceof AppError)) logger.error({ err, requestId }, 'unhandled error');
      const body = problemFromError(err, requestId);
      if (res.headersSent) return void res.destroy();
      res.writeHead(body.status, { 'content-type': PROBLEM_CONTENT_TYPE, [REQUEST_ID_HEADER]: requestId });
      res.end(JSON.stringify(body));
    };
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limitBytes) {
      req.resume();
      return refuse(new AppError('BAD_USER_INPUT', 'The request body is too large', { field: 'body' }));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limitBytes) chunks.push(chunk);
    });
    req.on('error', refuse);
    req.on('end', () => {
      if (size > limitBytes) return refuse(new AppError('BAD_USER_INPUT', 'The request body is too large', { field: 'body' }));
      let body: unknown;
      try {
        const text = Buffer.concat(chunks, size).toString('utf8');
        body = text.length ? JSON.parse(text) : {};
      } catch {
        return refuse(new AppError('BAD_USER_INPUT', 'The request body is not valid JSON', { field: 'body' }));
      }
      runWithRequestId(requestId, () => endpoint({ headers: req.headers, body, requestId })).then((reply) => {
        for (const [name, value] of reply.headers) res.setHeader(name, value);
        res.setHeader(REQUEST_ID_HEADER, requestId);
        res.statusCode = reply.status;
        res.end(reply.body);
      }, refuse);
    });
  };
  directHandlers.set(app, (req, res) => {
    if (req.method !== 'POST' || req.url !== GRAPHQL_PATH || !isUtf8Json(req.headers['content-type']) || req.headers['content-encoding'])
      return false;
    const requestId = requestIdFrom(req.headers[REQUEST_ID_HEADER]);
    req.headers[REQUEST_ID_HEADER] = requestId;
    handle(req, res, requestId);
    return true;
  });
}
