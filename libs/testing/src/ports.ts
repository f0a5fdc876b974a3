import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The kernel's ephemeral range (outgoing connections' local ports and `listen(0)` come from here). */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low && high) return [low, high];
  } catch {
    /* not Linux: the IANA range */
  }
  return [49152, 65535];
}

const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });

const handedOut = new Set<number>();

/**
 * A port for a process a test starts and that binds later. Drawn below the ephemeral range:
 * a port from `listen(0)` can be taken meanwhile by any outgoing connection (to PostgreSQL,
 * Redis) or another spec's `listen(0)`, which made `npm start` fail with EADDRINUSE under load;
 * only an explicit listener can take one of these.
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const floor = 25_000; // tools/scale-out takes fixed ports from 21000
  const span = Math.max(1000, low - floor);
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = floor + Math.floor(Math.random() * span);
    if (port >= low || handedOut.has(port)) continue;
    if (await canListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('no free port below the ephemeral range');
}
