/** A private redis-server with the deployments' ACL users (tools/service-mode/redis-users.sh): this run may kill it. */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { exited, waitFor } from './processes';

/** The ACL user each app connects as, and its password variable for redis-users.sh. */
const USERS = { auth: 'AUTH', 'rest-facade': 'FACADE', gateway: 'GATEWAY', accounts: 'ACCOUNTS', banking: 'BANKING', oms: 'OMS' } as const;
export type RedisUser = keyof typeof USERS;

export class PrivateRedis {
  private readonly passwords = Object.fromEntries(Object.keys(USERS).map((u) => [u, randomBytes(16).toString('hex')])) as Record<
    RedisUser,
    string
  >;
  private child: ChildProcess | undefined;

  constructor(
    private readonly root: string,
    private readonly dir: string,
    readonly port: number,
    readonly stream: string,
    /** false: a plain redis-server, its default user on (the all-in-one connects with one URL for every app). */
    private readonly acl = true,
  ) {}

  /** redis://<user>:<password>@127.0.0.1:<port> (without ACL users: the default user) */
  url(user?: RedisUser): string {
    return this.acl && user ? `redis://${user}:${this.passwords[user]}@127.0.0.1:${this.port}` : `redis://127.0.0.1:${this.port}`;
  }

  /** What an app connects with: its ACL user's URL. */
  env(app: RedisUser): Record<string, string> {
    return { REDIS_URL: this.url(app) };
  }

  async start(): Promise<void> {
    const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'], EVENTS_STREAM: this.stream };
    for (const [user, variable] of Object.entries(USERS)) env[`REDIS_${variable}_PASSWORD`] = this.passwords[user as RedisUser];
    const log = openSync(join(this.dir, `redis-${this.port}.log`), 'a');
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    this.child = this.acl
      ? spawn('sh', [join(this.root, 'tools/service-mode/redis-users.sh'), ...args], { env, stdio: ['ignore', log, log] })
      : spawn('redis-server', args, { env, stdio: ['ignore', log, log] });
    // Up when it answers (NOAUTH: the default user is off).
    await waitFor(`redis on ${this.port}`, 10_000, async () => /NOAUTH|PONG/.test(await ping(this.port)));
  }

  /** kill -9: every client's connection drops, nothing is saved. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGKILL');
    await exited(child, 5000);
  }

  async stop(): Promise<void> {
    await this.kill();
  }
}

/** One PING over a raw socket: the server's first reply line, or the error. */
function ping(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (answer: string) => {
      socket.destroy();
      resolve(answer);
    };
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => done(String(d)));
    socket.on('error', (err) => done(err.message));
    socket.setTimeout(1000, () => done('timeout'));
  });
}
