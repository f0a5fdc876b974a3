/** A private PostgreSQL cluster (Debian's binaries) in a temporary directory: this run may crash it, nobody else uses it. */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The newest installed server's bin directory (/usr/lib/postgresql/<major>/bin). */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((d) => existsSync(join(root, d, 'bin', 'initdb'))) : [];
  if (!majors.length) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)');
  return join(root, majors.sort((a, b) => Number(b) - Number(a))[0]!, 'bin');
}

export class PrivatePostgres {
  private readonly bin = binDir();
  readonly dataDir: string;
  private readonly home: string;

  constructor(
    dir: string,
    readonly port: number,
  ) {
    this.home = join(dir, 'postgres');
    this.dataDir = join(this.home, 'data');
  }

  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** initdb as the current user (postgres refuses to run as root: then as the postgres user). */
  init(): void {
    mkdirSync(this.home, { recursive: true });
    chmodSync(this.home, 0o700);
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres', this.home]);
    this.run('initdb', ['-D', this.dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
    writeFileSync(
      join(this.dataDir, 'postgresql.auto.conf'),
      // Fast and throwaway: no durability, room for twelve apps' pools.
      `listen_addresses = '127.0.0.1'\nport = ${this.port}\nunix_socket_directories = '${this.dataDir}'\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\nmax_connections = 300\nshared_buffers = 64MB\n`,
    );
  }

  start(): void {
    this.run('pg_ctl', ['-D', this.dataDir, '-l', join(this.dataDir, 'server.log'), '-w', '-t', '30', 'start']);
  }

  /** A crash: every backend killed at once, no checkpoint (recovery on the next start). */
  crash(): void {
    this.run('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']);
  }

  stop(): void {
    if (existsSync(join(this.dataDir, 'postmaster.pid'))) this.run('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop'], true);
  }

  createDatabase(name: string): void {
    this.run('psql', ['-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '-qAtX', '-c', `CREATE DATABASE "${name}"`]);
  }

  private run(tool: string, args: string[], quiet = false): void {
    const asRoot = process.getuid?.() === 0;
    const cmd = join(this.bin, tool);
    // As root: run the binaries as the postgres user (the server refuses root), who owns the data directory.
    const res = asRoot
      ? spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8' })
      : spawnSync(cmd, args, { encoding: 'utf8' });
    if (res.status !== 0 && !quiet)
      throw new Error(`${tool} ${args.join(' ')} failed (${res.status}): ${(res.stderr || res.stdout || '').trim().slice(-600)}`);
  }
}
