/** The machine's ceiling: a bare Node HTTP server answering a small JSON body (PORT). */
import { createServer } from 'node:http';

const body = JSON.stringify({ ok: true });
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(Number(process.env['PORT']), '127.0.0.1');
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
