/**
 * A vendor's webhook endpoints at their leanest: a bare Node HTTP server on 127.0.0.1 that reads
 * each request's body and answers 200, on every port of PORTS (comma-separated) so that each
 * endpoint is an origin of its own, as each vendor's would be (a sender pools connections per origin).
 */
import { createServer, type RequestListener } from 'node:http';

const body = 'ok';
const answer: RequestListener = (req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
};
const listeners = (process.env['PORTS'] ?? '').split(',').map((port) => createServer(answer).listen(Number(port), '127.0.0.1'));
process.on('SIGTERM', () => {
  let open = listeners.length;
  for (const one of listeners) {
    one.closeAllConnections();
    one.close(() => --open || process.exit(0));
  }
});
