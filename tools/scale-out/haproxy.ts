/**
 * HAProxy (Debian's package) in front of each pair of instances: a frontend per app and
 * listener, round robin, each server health-checked on its internal /readyz. Its admin socket
 * tells which servers it sees up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { exited, waitFor } from './processes';
import { APPS, type AppName, type Instance, type Services } from './services';

export const backendName = (app: AppName, listener: 'public' | 'internal') => `${app.replace('-', '_')}_${listener}`;

/** Health checks every 500 ms; 2 failures take a server out, 2 successes bring it back. */
const CHECK_INTER_MS = 500;
const CHECK_FALL = 2;

/**
 * HAProxy's `global` and `defaults` as every HAProxy of ours runs (the proofs' and the bench's
 * ingress): HTTP, kept-alive connections, a failed connection retried on another server, health
 * checks' pace, and its own 503 said as the apps say it.
 */
export function haproxyHttpDefaults(socket?: string): string[] {
  return [
    'global',
    ...(socket ? [`  stats socket ${socket} mode 600 level admin`] : []),
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

/** `extra`: sections appended as they are (a TCP frontend for the database, say). */
function haproxyConfig(services: Services, socket: string, extra: string[] = []): string {
  const lines = haproxyHttpDefaults(socket);
  for (const app of APPS) {
    for (const listener of ['public', 'internal'] as const) {
      const name = backendName(app, listener);
      const port = listener === 'public' ? services.ports.lbPublic(app) : services.ports.lbInternal(app);
      lines.push(`frontend ${name}`, `  bind 127.0.0.1:${port}`);
      // As the deployment's Ingress does: {base_url}/oauth/* straight to auth, which answers the
      // API's spelling itself, so no facade hop sits on the token path.
      if (app === 'rest-facade' && listener === 'public')
        lines.push('  acl oauth path_beg /v1/oauth/', `  use_backend ${backendName('auth', 'public')} if oauth`);
      lines.push(`  default_backend ${name}`, '');
      lines.push(
        `backend ${name}`,
        '  balance roundrobin',
        '  option httpchk GET /readyz',
        '  http-check expect status 200',
        // Only a request that is safe to send twice is retried after it may have reached a server.
        '  http-request disable-l7-retry unless METH_GET || METH_HEAD',
      );
      // The apps at the edge learn the client's address from X-Forwarded-For (they trust the loopback proxy).
      if ((app === 'rest-facade' || app === 'auth') && listener === 'public') lines.push('  option forwardfor');
      for (const x of services.of(app)) {
        const p = listener === 'public' ? services.ports.public(app, x.index) : services.ports.internal(app, x.index);
        lines.push(`  server ${x.name} 127.0.0.1:${p} check port ${services.ports.internal(app, x.index)}`);
      }
      lines.push('');
    }
  }
  return [...lines, ...extra].join('\n');
}

/** One HAProxy process on a configuration of ours (given its admin socket's path), its log and admin socket in `dir`. */
export class HaProxy {
  private child: ChildProcess | undefined;
  readonly socket: string;

  constructor(
    private readonly dir: string,
    private readonly config: (socket: string) => string,
  ) {
    this.socket = join(dir, 'haproxy.sock');
  }

  /** In front of each pair of the services' instances; `extra` sections appended (a TCP frontend for the database, say). */
  static forServices(dir: string, services: Services, extra: string[] = []): HaProxy {
    return new HaProxy(dir, (socket) => haproxyConfig(services, socket, extra));
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    const config = join(this.dir, 'haproxy.cfg');
    writeFileSync(config, this.config(this.socket));
    const log = openSync(join(this.dir, 'haproxy.log'), 'a');
    this.child = spawn('haproxy', ['-f', config, '-db'], { stdio: ['ignore', log, log] });
    // Not installed: a failure the run reports (and cleans up after), not an unhandled event that orphans every app.
    let failed: Error | undefined;
    this.child.on('error', (err) => (failed = new Error(`haproxy could not start (${err.message}): apt-get install haproxy`)));
    await waitFor('HAProxy admin socket', 10_000, async () => {
      if (failed) throw failed;
      if (this.child?.exitCode !== null) throw new Error(`haproxy exited (see ${join(this.dir, 'haproxy.log')})`);
      return (await this.command('show info')).includes('Name: HAProxy');
    });
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

  /** How many 2xx answers each backend has passed on so far. */
  async answered2xx(app: AppName): Promise<number> {
    return Number((await this.stat('hrsp_2xx')).get(`${backendName(app, 'public')}/BACKEND`) ?? 0);
  }

  /** Waits until both of the instance's servers (public and internal backends) are UP. */
  async waitUp(x: Instance, timeoutMs = 20_000): Promise<void> {
    await waitFor(`HAProxy to see ${x.name} up`, timeoutMs, async () => {
      const s = await this.statuses();
      return (['public', 'internal'] as const).every((l) => s.get(`${backendName(x.app, l)}/${x.name}`) === 'UP');
    });
  }

  async stop(): Promise<void> {
    if (!this.child || this.child.exitCode !== null) return;
    this.child.kill('SIGTERM');
    if ((await exited(this.child, 5000)) === undefined) this.child.kill('SIGKILL');
  }
}
