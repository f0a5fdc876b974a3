/**
 * The deployment's ingress on this machine: one HAProxy (Debian's package, as the scale-out proof
 * runs it) in front of both token endpoints the bench compares in service mode. Our `{base_url}`
 * is routed as the Kubernetes Ingress routes it: `/v1/oauth/*` straight to auth's public listener,
 * everything else to the facade. The peer gets a frontend of its own on the same HAProxy, with the
 * same settings, so neither side pays a Node hop and both pay the same proxy.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './processes';

export interface Ingress {
  /** Our `{base_url}` (with `/v1`) and the peer's origin, both at HAProxy. */
  api: string;
  peer: string;
  pid: number;
  stop(): Promise<void>;
}

const origin = (url: string) => new URL(url).host;

function config(ports: { api: number; peer: number }, targets: { facade: string; auth: string; peer: string }): string {
  return [
    'global',
    '  maxconn 4096',
    '',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout http-keep-alive 30s',
    // Both sides see the client's address as a deployment's apps do.
    '  option forwardfor',
    '',
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
    ...(['facade', 'auth', 'peer'] as const).flatMap((name) => [`backend ${name}`, `  server ${name} ${origin(targets[name])}`, '']),
  ].join('\n');
}

/** HAProxy in front of our facade and auth (`/v1/oauth/*`) and of the peer; ready once both frontends answer `ready` 200. */
export async function startIngress(
  logDir: string,
  targets: { facade: string; auth: string; peer: string },
  ready: { api: string; peer: string },
): Promise<Ingress> {
  const ports = { api: await freePort(), peer: await freePort() };
  const file = join(logDir, 'haproxy.cfg');
  writeFileSync(file, config(ports, targets));
  const fd = openSync(join(logDir, 'haproxy.log'), 'a');
  const child: ChildProcess = spawn('haproxy', ['-f', file, '-db'], { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let failed: Error | undefined;
  child.on('error', (err) => (failed = new Error(`haproxy could not start (${err.message}): apt-get install haproxy`)));
  const ingress = {
    api: `http://127.0.0.1:${ports.api}/v1`,
    peer: `http://127.0.0.1:${ports.peer}`,
    pid: child.pid ?? 0,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
  const answers = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(2000) }).catch(() => undefined))?.status === 200;
  for (let deadline = Date.now() + 10_000; ; await sleep(200)) {
    if (failed) throw failed;
    if (child.exitCode !== null) throw new Error(`haproxy exited ${child.exitCode} (see ${join(logDir, 'haproxy.log')})`);
    if ((await answers(`${ingress.api}${ready.api}`)) && (await answers(`${ingress.peer}${ready.peer}`))) return ingress;
    if (Date.now() > deadline) {
      await ingress.stop();
      throw new Error(`HAProxy's frontends did not answer within 10 s (see ${join(logDir, 'haproxy.log')})`);
    }
  }
}
