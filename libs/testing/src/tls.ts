import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A self-signed certificate (openssl, P-256, one day) for localhost, 127.0.0.1 and ::1, plus `names`; `cert` is its own CA. */
function selfSignedCertificate(names: string[] = []): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'test-tls-'));
  try {
    const san = ['DNS:localhost', 'IP:127.0.0.1', 'IP:::1', ...names.map((n) => `DNS:${n}`)].join(',');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        `subjectAltName=${san}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface HttpsTestServer {
  port: number;
  /** The certificate to trust (self-signed). */
  ca: string;
  /** TCP connections accepted so far (counted before any TLS), and requests answered. */
  connections: number;
  requests: number;
  close(): Promise<void>;
}

/** An https server on every loopback address (127.0.0.1 and ::1) and a free port, counting what reaches it. */
export async function startHttpsTestServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  names: string[] = [],
): Promise<HttpsTestServer> {
  const { key, cert } = selfSignedCertificate(names);
  const state = { connections: 0, requests: 0 };
  const server: Server = createServer({ key, cert }, (req, res) => {
    state.requests++;
    handler(req, res);
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    ca: cert,
    get connections() {
      return state.connections;
    },
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
