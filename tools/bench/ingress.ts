/**
 * The deployment's ingress on this machine: one HAProxy (Debian's package, run as the scale-out
 * proof runs it, with its settings) in front of both token endpoints the bench compares in service
 * mode. Our `{base_url}` is routed as the Kubernetes Ingress routes it: `/v1/oauth/*` straight to
 * auth's public listener, everything else to the facade. The peer gets a frontend of its own on the
 * same HAProxy, so neither side pays a Node hop and both pay the same proxy.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { HaProxyProcess, haproxyHttpDefaults } from '@trading/testing/haproxy';
import { freePort } from './processes';

export interface Ingress {
  /** Our `{base_url}` (with `/v1`) and the peer's origin, both at HAProxy. */
  api: string;
  peer: string;
  pid: number;
  stop(): Promise<void>;
}

type Targets = { facade: string; auth: string; peer: string };

function config(socket: string, ports: { api: number; peer: number }, targets: Targets): string {
  return [
    ...haproxyHttpDefaults(socket),
    'frontend api',
    `  bind 127.0.0.1:${ports.api}`,
    '  acl oauth path_beg /v1/oauth/',
    '  use_backend auth if oauth',
    '  default_backend facade',
    '',
    'frontend peer',
    `  bind 127.0.0.1:${ports.peer}`,
    '  default_backend peer',
    '',
    // Both sides learn the client's address as a deployment's apps do.
    ...(['facade', 'auth', 'peer'] as const).flatMap((name) => [
      `backend ${name}`,
      '  option forwardfor',
      `  server ${name} ${new URL(targets[name]).host}`,
      '',
    ]),
  ].join('\n');
}

/** HAProxy in front of our facade and auth (`/v1/oauth/*`) and of the peer; ready once both frontends answer `ready` 200. */
export async function startIngress(logDir: string, targets: Targets, ready: { api: string; peer: string }): Promise<Ingress> {
  const ports = { api: await freePort(), peer: await freePort() };
  const haproxy = new HaProxyProcess(logDir, (socket) => config(socket, ports, targets));
  await haproxy.start();
  const ingress = {
    api: `http://127.0.0.1:${ports.api}/v1`,
    peer: `http://127.0.0.1:${ports.peer}`,
    pid: haproxy.pid ?? 0,
    stop: () => haproxy.stop(),
  };
  const answers = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(2000) }).catch(() => undefined))?.status === 200;
  for (let deadline = Date.now() + 10_000; ; await sleep(200)) {
    if ((await answers(`${ingress.api}${ready.api}`)) && (await answers(`${ingress.peer}${ready.peer}`))) return ingress;
    if (Date.now() > deadline) {
      await ingress.stop();
      throw new Error(`HAProxy's frontends did not answer within 10 s (see ${logDir}/haproxy.log)`);
    }
  }
}
