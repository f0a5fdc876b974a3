/**
 * The hop alone: the leanest reverse proxy Node offers (node:http in front, undici's pool of
 * kept-alive connections behind), with nothing of a real edge (no routing framework, no budget,
 * no access log, no signed address). The bench puts it in front of node-oidc-provider to measure
 * what one proxy hop costs rotation on this machine, whoever's token endpoint is behind it.
 *
 * Env: PORT, TARGET (an origin). Plain node: `node tools/bench/oidc-peer/proxy.mjs`.
 */
import { createServer } from 'node:http';
import { Pool } from 'undici';

const port = Number(process.env.PORT);
const target = process.env.TARGET;
if (!port || !target) throw new Error('PORT and TARGET are required');
const pool = new Pool(target, { connections: 256, keepAliveTimeout: 30_000 });

createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const { connection: _c, 'keep-alive': _k, ...headers } = req.headers;
    pool.request({ method: req.method, path: req.url, headers, body: chunks.length ? Buffer.concat(chunks) : undefined }).then(
      async (answer) => {
        const body = Buffer.from(await answer.body.arrayBuffer());
        const { connection: _ac, 'keep-alive': _ak, 'transfer-encoding': _t, ...answerHeaders } = answer.headers;
        res.writeHead(answer.statusCode, { ...answerHeaders, 'content-length': body.length });
        res.end(body);
      },
      () => {
        res.writeHead(502).end();
      },
    );
  });
}).listen(port, '127.0.0.1');
