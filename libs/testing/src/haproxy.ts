/**
 * HAProxy (Debian's package) as the proofs and the bench run it: one process on a configuration
 * of ours, its log and admin socket in a folder; the settings every configuration starts from.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Health checks every 500 ms; 2 failures take a server out, 2 successes bring it back. */
const CHECK_INTER_MS = 500;
const CHECK_FALL = 2;

/**
 * `global` and `defaults` as every HAProxy of ours runs: HTTP, kept-alive connections, a failed
 * connection retried on another server, health checks' pace, and its own 503 said as the apps say
 * it. `socket`: the admin socket's path.
 */
export function haproxyHttpDefaults(socket: string): string[] {
  return [
    'global',
    `  stats socket ${socket} mode 600 level admin`,
    '  maxconn 4096',
    '',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout queue 10s',
    // Longer than undici's 4 s idle keep-alive: the client closes an idle connection first, never mid-request.
    '  timeout http-keep-alive 30s',
    // A request that cannot reach a server (connection refused or reset before an answer) goes to the other one.
    '  retries 3',
    '  option redispatch 1',
    '  retry-on conn-failure empty-response response-timeout',
    // A server that is down (or coming back) is checked more often, so it is back in rotation
    // within half a second of being ready; a slow answer on a busy machine is not a failure.
    `  default-server inter ${CHECK_INTER_MS} downinter 200 fastinter 200 fall ${CHECK_FALL} rise 2`,
    '  timeout check 2s',
    // No instance ready (all restarting, or waiting for Redis or PostgreSQL): the balancer's own
    // 503 says what the apps' 503s say, a problem with Retry-After, so clients retry as usual.
    '  http-error status 503 content-type application/problem+json hdr Retry-After 2 string ' +
      '\'{"title":"Service unavailable","status":503,"code":"SERVICE_UNAVAILABLE","detail":"No instance is ready; try again shortly"}\'',
    '',
  ];
}

/** One HAProxy process on `config` (given its admin socket's path); `haproxy.cfg`, its log and socket in `dir`. */
export class HaProxyProcess {
  private child: ChildProcess | undefined;
  readonly socket: string;

  constructor(
    private readonly dir: string,
    private readonly config: (socket: string) => string,
  ) {
    this.socket = join(dir, 'haproxy.sock');
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Started, and answering on its admin socket (10 s at most). */
  async start(): Promise<void> {
    const config = join(this.dir, 'haproxy.cfg');
    writeFileSync(config, this.config(this.socket));
    const log = openSync(join(this.dir, 'haproxy.log'), 'a');
    const child = spawn('haproxy', ['-f', config, '-db'], { stdio: ['ignore', log, log] });
    this.child = child;
    // Not installed: a failure the run reports (and cleans up after), not an unhandled event that orphans every app.
    let failed: Error | undefined;
    child.on('error', (err) => (failed = new Error(`haproxy could not start (${err.message}): apt-get install haproxy`)));
    for (const deadline = Date.now() + 10_000; ; await sleep(200)) {
      if (failed) throw failed;
      if (child.exitCode !== null) throw new Error(`haproxy exited ${child.exitCode} (see ${join(this.dir, 'haproxy.log')})`);
      if ((await this.command('show info').catch(() => '')).includes('Name: HAProxy')) return;
      if (Date.now() > deadline)
        throw new Error(`haproxy's admin socket did not answer within 10 s (see ${join(this.dir, 'haproxy.log')})`);
    }
  }

  /** One admin-socket command, its whole answer. */
  command(cmd: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(this.socket);
      let out = '';
      socket.on('connect', () => socket.end(`${cmd}\n`));
      socket.on('data', (d) => (out += String(d)));
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
    });
  }

  /** One column of HAProxy's statistics, per backend/server (a backend's own row is backend/BACKEND). */
  async stat(column: string): Promise<Map<string, string>> {
    const csv = await this.command('show stat');
    const [header, ...rows] = csv.replace(/^# /, '').trim().split('\n');
    const cols = header!.split(',');
    const [px, sv, st] = ['pxname', 'svname', column].map((c) => cols.indexOf(c));
    return new Map(rows.map((r) => r.split(',')).map((r) => [`${r[px!]}/${r[sv!]}`, r[st!]!]));
  }

  /** Server status as HAProxy sees it, per backend/server: UP, DOWN, MAINT, "UP 1/2", … */
  statuses(): Promise<Map<string, string>> {
    return this.stat('status');
  }

  /** SIGTERM, then SIGKILL if it is still there after 5 s. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<boolean>((resolve) => child.once('exit', () => resolve(true)));
    child.kill('SIGTERM');
    if (!(await Promise.race([gone, sleep(5000).then(() => false)]))) child.kill('SIGKILL');
  }
}
