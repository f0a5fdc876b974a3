/**
 * The machine's ceiling: a bare Node HTTP server answering a small JSON body (PORT). With PORTS
 * (comma-separated), one such server on each: the webhook rows' receiver, a port per endpoint so
 * that each is an origin of its own, as each vendor's would be (a sender pools connections per origin).
 */
import { createServer, type RequestListener } from 'node:http';

const body = JSON.stringify({ ok: true });
const answer: RequestListener = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};
const ports = (process.env['PORTS'] ?? process.env['PORT'] ?? '').split(',');
const servers = ports.map((port) => createServer(answer).listen(Number(port), '127.0.0.1'));
process.on('SIGTERM', () => {
  let open = servers.length;
  for (const server of servers) {
    server.closeAllConnections();
    server.close(() => --open || process.exit(0));
  }
});
